// The inline sync publish (HookOptions::sync_publish = kInline): Commit publishes a committed
// command's pending rows itself before it returns.
//
// The rows go out in order, one message at a time (a row, or with pack_max_events > 1 a pack of
// consecutive rows, sync_packs.h), each bounded by sync_publish_timeout and all of them
// by the command's deadline (lease_start_ms + sync_publish_timeout on the clock that took
// lease_start_ms, so the last publish ends before the rows' lease does). The first row that
// fails or finds the deadline passed stops it: the later rows of the command must not overtake
// it, so they are left for the relay with it (one outcome decides every row of a pack). Rows behind
// an earlier pending row of the room are left untried. Every publish is reported to the sync
// breaker; a publish cut short by the deadline (not the command's first) proves nothing when it
// times out. Every publish's answer about the room is reported to the Hook's RoomBackoff: a room
// refusal backs the room off (Commit then leaves its rows to the relay), a delivery clears it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/publisher.h"
#include "hook_counters.h"
#include "room_backoff.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"
#include "sync_breaker.h"
#include "sync_packs.h"

namespace room_outbox::internal {

inline constexpr const char* kEarlierPending =
    "sync publish skipped: an earlier event of the room is still pending";

// One pending row of the sync publish.
struct SyncItem {
  size_t index = 0;  // into the command's events
  int64_t row_id = 0;
};

// What the sync publish did with the command's pending rows.
struct SyncRows {
  std::vector<int64_t> delivered;  // IM took them: to be marked published
  std::vector<int64_t> left;       // to be released to the relay
  bool probe_recorded = false;     // the sync breaker's probe got its verdict
  // The pack (2+ rows) whose send failed without IM definitely dropping it, else events 0: its
  // size is recorded on its first row before the release (HandBackSyncRows).
  FailedPack failed_pack{};
};

class InlineSyncPublish {
 public:
  // Every argument must outlive this object. `counters` (may be null) counts each request and
  // each row left untried; `room_backoff` (may be null) hears each answer about the room.
  InlineSyncPublish(core::Publisher& publisher, core::ImBreaker& breaker, core::Clock& clock,
                    std::chrono::milliseconds sync_publish_timeout, const LogCallback& log,
                    HookCounters* counters = nullptr, PackLimits packs = {},
                    RoomBackoff* room_backoff = nullptr)
      : publisher_(publisher),
        breaker_(breaker),
        clock_(clock),
        sync_publish_timeout_(sync_publish_timeout),
        log_(log),
        counters_(counters),
        packs_(packs),
        room_backoff_(room_backoff) {}

  // Publishes `items` (their envelopes in `envelopes`) until `deadline_ms` (the clock's
  // SteadyMs) and writes each row's state and error into `deliveries` (indexed like the
  // envelopes). `earlier_pending`: the room had an earlier pending row, nothing is sent. `probe`:
  // this is the sync breaker's probe.
  // `rows` are the command's rows, their encoded envelopes sent as they are.
  SyncRows Publish(const std::vector<Envelope>& envelopes, const std::vector<NewOutboxRow>& rows,
                   const std::vector<SyncItem>& items, int64_t deadline_ms, bool earlier_pending,
                   bool probe, std::vector<EventDelivery>& deliveries);

 private:
  // The messages of `items`, as [begin, end) ranges of `items`.
  std::vector<std::pair<size_t, size_t>> Messages(const std::vector<Envelope>& envelopes,
                                                  const std::vector<NewOutboxRow>& rows,
                                                  const std::vector<SyncItem>& items) const;
  // The message of items[begin, end): the first row, the others packed with it.
  static core::PublishMessage MessageOf(const std::vector<Envelope>& envelopes,
                                        const std::vector<NewOutboxRow>& rows_written,
                                        const std::vector<SyncItem>& items, size_t begin,
                                        size_t end);
  static bool Settle(const core::PublishOutcome& outcome, const std::vector<SyncItem>& items,
                     size_t begin, size_t end, std::vector<EventDelivery>& deliveries,
                     SyncRows& rows);
  void Log(LogLevel level, const std::string& line) const;

  core::Publisher& publisher_;
  core::ImBreaker& breaker_;
  core::Clock& clock_;
  const std::chrono::milliseconds sync_publish_timeout_;
  const LogCallback& log_;
  HookCounters* counters_;
  const PackLimits packs_;
  RoomBackoff* room_backoff_;
};

}  // namespace room_outbox::internal
