// ClaimAhead: the daemon loop's next claim, made on a store of its own (a second database
// connection) while the current claim's messages are sent, so the claim's database work overlaps
// the IM requests of the round before.
//
// Nothing about the guarantees changes:
//   - per-room order: the store's head rule (a row is leased only in the run that starts at its
//     room's oldest pending row) keeps a room whose rows the current claim holds out of the
//     claim made ahead, exactly as it keeps two relays apart; and a room's later row can only be
//     claimed once the earlier one's mark is committed (the worker marks on its own connection);
//   - leases: the claim's lease is measured from just before its own ClaimDue call, on the
//     monotonic clock (Taken::claimed_at, read when it is started, before the thread runs the
//     call), and the worker checks it before every message as usual;
//   - kill -9: a claim made ahead holds leased rows nobody has sent; a killed relay leaves them
//     pending until the lease ends, never delivered and unmarked.
// The worker releases a claim made ahead that it will not send (a stop, a round that waits,
// a database error), on its own connection, before Run returns.
//
// Thread-safety: one owner thread calls Start/Take/pending and reads the clock; ClaimDue runs
// on a thread of its own, the only user of `store` meanwhile.
#pragma once

#include <cstdint>
#include <future>
#include <optional>

#include "core/result.h"
#include "store/relay_store.h"
#include "worker/loop_clock.h"

namespace room_outbox::relay {

class ClaimAhead {
 public:
  // `store` is used by this object alone; both must outlive it.
  ClaimAhead(RelayStore& store, LoopClock& clock) : store_(store), clock_(clock) {}
  ~ClaimAhead();  // waits for a claim still under way (its rows are the caller's to release)
  ClaimAhead(const ClaimAhead&) = delete;
  ClaimAhead& operator=(const ClaimAhead&) = delete;

  struct Taken {
    core::Result<Claim> claim;
    int64_t claimed_at = 0;   // monotonic ms, read by Start before the ClaimDue call
    bool made_ahead = false;  // by Start (not a claim the caller made itself)
  };

  // Starts ClaimDue(options) on its own thread. Does nothing while a claim is under way or
  // not yet taken.
  void Start(const ClaimOptions& options);
  // A claim was started and not yet taken.
  bool pending() const { return future_.valid(); }
  // Waits for the claim started last and hands it over; nullopt when none was started.
  std::optional<Taken> Take();

 private:
  RelayStore& store_;
  LoopClock& clock_;
  std::future<Taken> future_;
};

}  // namespace room_outbox::relay
