// NodeLockedStore: a RelayStore that claims only while this process holds its node's lock
// (node_lock.h), with claim tokens that carry the node and the run (core/claim_token.h). Every
// other call goes straight to the wrapped store: results are written by token, whoever holds the
// lock, and reads change nothing.
//
// A claim asks NodeLock::Hold() first; when it fails the claim fails with its error and claims
// nothing (kAlreadyExists: another live relay runs with this node_id; kUnavailable: the
// database is away), so the worker backs off and reports the error as any failed round.
//
// Thread-safety: as the wrapped store (one thread per store); the lock may be shared by several.
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>

#include "store/node_lock.h"
#include "store/relay_store.h"

namespace room_outbox::relay {

class NodeLockedStore final : public RelayStore {
 public:
  // `inner` and `lock` must outlive the store. `on_taken` (optional) is called after a claim's
  // Hold() took the lock (at start, or again after its connection was lost).
  NodeLockedStore(RelayStore& inner, NodeLock& lock,
                  std::function<void(const NodeLockHold&)> on_taken = {})
      : inner_(inner), lock_(lock), on_taken_(std::move(on_taken)) {}

  core::Result<Claim> ClaimDue(const ClaimOptions& options) override {
    auto held = lock_.Hold();
    if (!held) return core::Fail(held.error());
    if (held->taken && on_taken_) on_taken_(*held);
    ClaimOptions locked = options;
    locked.token_prefix = lock_.token_prefix();
    return inner_.ClaimDue(locked);
  }
  core::Result<bool> AnyDue(bool per_room_order) override { return inner_.AnyDue(per_room_order); }
  core::Result<size_t> MarkPublished(const std::string& token, std::span<const int64_t> ids,
                                     std::span<const AttemptNote> notes) override {
    return inner_.MarkPublished(token, ids, notes);
  }
  core::Result<size_t> MarkFailed(const std::string& token,
                                  std::span<const FailedAttempt> attempts) override {
    return inner_.MarkFailed(token, attempts);
  }
  core::Result<size_t> MarkParked(const std::string& token,
                                  std::span<const FailedAttempt> attempts) override {
    return inner_.MarkParked(token, attempts);
  }
  core::Result<size_t> Release(const std::string& token, std::span<const int64_t> ids) override {
    return inner_.Release(token, ids);
  }
  core::Result<OutboxStats> Stats() override { return inner_.Stats(); }

 private:
  RelayStore& inner_;
  NodeLock& lock_;
  std::function<void(const NodeLockHold&)> on_taken_;
};

}  // namespace room_outbox::relay
