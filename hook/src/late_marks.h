// LateMarks: the marks published the hook could not write. IM took the rows (the sync publish,
// inline or background, was answered OK) and the mark after it failed, most often because the
// connection dropped between the publish and the mark. Without the mark the rows stay pending
// under the sync lease and the relay sends them again once it ends: a duplicate although the hook
// had IM's answer. Kept here, they are written when the connection works again: before the next
// Commit's transaction, on that Commit's connection (at most kWritesPerCommit statements, one
// attempt), and, with sync_publish = "background", by the background thread on a backoff
// (kFirstRetry doubling to kMaxRetry).
//
// Each row is kept with the claim token of its lease and written with the very statement the
// first mark used (HookStore::MarkPublished: claim_token = ? AND status = 'pending'), so a row a
// relay took over after the lease (it holds another token, or is published already) is left as
// it is: the statement marks 0 rows, which is fine, and nothing is counted as written then.
//
// Bounded: at most kMaxRows rows wait (besides a batch being written). Keeping more drops the
// oldest with a warning, counted in room_outbox_hook_late_marks_dropped_total: a dropped mark
// only means the relay may send that row again after its lease, never a loss.
//
// Thread-safety: every call may come from any thread. Write holds no lock while it waits for the
// database; rows being written count as waiting and are kept again when the write fails.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "hook_counters.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

class LateMarks {
 public:
  // One row id is 8 bytes; 10,000 rows are what a long IM answer burst (a background queue of 256
  // commands of many events) can leave when the connection drops, at under 100 kB kept.
  static constexpr size_t kMaxRows = 10000;
  // A Commit writes at most this many statements (one per command's token) before its
  // transaction. The inline sync publish leaves one command's marks per lost connection (the
  // Commits after it fail until the database is back), so one Commit normally writes them all;
  // a long backlog (background mode) is the background thread's to write.
  static constexpr size_t kWritesPerCommit = 8;
  // The background thread's retry of a failed late write: first after kFirstRetry, doubling on
  // each failure, at most kMaxRetry; a write that succeeds starts it over.
  static constexpr std::chrono::milliseconds kFirstRetry{1000};
  static constexpr std::chrono::milliseconds kMaxRetry{30000};

  // `counters` (may be null; must outlive this object) counts what is written and dropped; `log`
  // (may be empty) gets the warnings.
  explicit LateMarks(HookCounters* counters, LogCallback log, size_t max_rows = kMaxRows)
      : counters_(counters), log_(std::move(log)), max_rows_(max_rows == 0 ? 1 : max_rows) {}
  LateMarks(const LateMarks&) = delete;
  LateMarks& operator=(const LateMarks&) = delete;

  // Keeps the marks of `ids`, delivered under the lease of `token`.
  void Keep(const std::string& token, std::span<const int64_t> ids);

  // Writes the waiting marks through `store`, the oldest first, one statement per token, at most
  // `max_writes` statements; stops at the first failure and keeps what it did not write. Returns
  // the rows marked (those a relay took over are not), or the failing statement's error (rows
  // marked before it are counted all the same). Marks may still wait when `max_writes` ran out.
  core::Result<size_t> Write(HookStore& store, size_t max_writes);

  // Rows waiting, those being written included.
  size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }
  bool empty() const { return waiting() == 0; }

 private:
  struct Held {
    std::string token;
    std::vector<int64_t> ids;
  };

  // Drops the oldest rows until at most max_rows_ wait (called with mu_ held); returns how many.
  size_t DropOverBound();
  // The warning of DropOverBound's rows (none for 0).
  void WarnDropped(size_t dropped) const;

  HookCounters* counters_;
  const LogCallback log_;
  const size_t max_rows_;
  mutable std::mutex mu_;
  std::deque<Held> held_;           // oldest first
  size_t held_rows_ = 0;            // rows in held_
  std::atomic<size_t> waiting_{0};  // held_rows_ + rows being written
};

// The background thread's retry delay of late writes (LateMarks::kFirstRetry doubling to
// kMaxRetry): plain values, no clock.
class LateMarkRetry {
 public:
  // The delay before the next attempt; each call after a failure doubles it.
  std::chrono::milliseconds Failed() {
    delay_ = failures_++ == 0 ? LateMarks::kFirstRetry : std::min(delay_ * 2, LateMarks::kMaxRetry);
    return delay_;
  }
  // A write succeeded: the next failure waits kFirstRetry again.
  void Succeeded() { failures_ = 0; }

 private:
  std::chrono::milliseconds delay_{0};
  unsigned failures_ = 0;
};

}  // namespace room_outbox::internal
