// UnwrittenResults: the results a relay has but could not write because the database went away
// in the middle of a round (a lost connection, a server restarting or failing over): rows IM
// accepted (to be marked published), failed attempts and parks (with their errors and delays),
// and rows it held but never sent (to be given back). They are kept in memory, by claim token, and
// written first when the database answers again, before the next claim (OutboxWorker): so a row
// IM took is not sent again, and a room whose rows this relay holds is not stalled for the rest of
// the lease.
//
// Every write names the claim token, as the round's own marks do: a row another relay took over
// meanwhile (the lease ran out during a long outage) keeps that relay's result; such a write
// counts fewer rows, which is logged, not an error.
//
// Bounded: at most kMaxUnwrittenRows rows are kept (a claim holds at most batch_size <= 10,000,
// and no new claim is made while results wait). Past the bound the oldest are dropped with a
// warning: a dropped result costs a resend after the lease, never a lost row.
//
// One thread (the worker's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "store/relay_store.h"
#include "telemetry/log_line.h"

namespace room_outbox::relay {

inline constexpr size_t kMaxUnwrittenRows = 20000;

class UnwrittenResults {
 public:
  // What each kind of result is written with.
  enum class Kind { kPublished, kFailed, kParked, kReleased };

  // `notes`: empty, or kPublished's history entries, one per id (RelayStore::MarkPublished).
  void KeepIds(Kind kind, const std::string& token, std::span<const int64_t> ids,
               std::span<const AttemptNote> notes = {});
  void KeepAttempts(Kind kind, const std::string& token, std::span<const FailedAttempt> attempts);

  bool empty() const { return rows_ == 0; }
  size_t rows() const { return rows_; }
  size_t dropped() const { return dropped_; }

  // Writes what is kept, in the order kept (marks before the releases of the same round), and
  // forgets each batch once it is written. The first failure stops and is returned; the rest is
  // kept for the next call.
  [[nodiscard]] core::Result<void> WriteTo(RelayStore& store, Logger& logger,
                                           std::string_view node_id);

 private:
  struct Batch {
    Kind kind = Kind::kPublished;
    std::string token;
    std::vector<int64_t> ids;             // kPublished, kReleased
    std::vector<FailedAttempt> attempts;  // kFailed, kParked
    std::vector<AttemptNote> notes;       // kPublished: none, or one per id
    size_t size() const { return ids.size() + attempts.size(); }
  };

  core::Result<size_t> Write(RelayStore& store, const Batch& batch) const;
  void Bound();

  std::vector<Batch> batches_;  // oldest first
  size_t rows_ = 0;
  size_t dropped_ = 0;
};

// "published", "failed", "parked", "released".
const char* UnwrittenKindName(UnwrittenResults::Kind kind);

}  // namespace room_outbox::relay
