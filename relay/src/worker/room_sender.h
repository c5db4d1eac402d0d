// RoomSender: sends one claim's queued rows, room by room, in waves. A wave holds at most one
// message per room and at most max_in_flight messages, sent by Publisher::PublishMany, each
// bounded by publish_timeout. A message carries one row, or with pack_max_events > 1 a pack of the
// room's consecutive rows (PackRule), and its one answer decides every row of it. Rows of types the
// publisher never sends are delivered in order without a send slot or pacing. A row that
// ExpiryPolicy finds too old at the claim's server now when it reaches the front of its room
// ([tencent_im.max_age_by_type]) is parked as expired without a send or pacing, and its room's next
// row goes on (never-sent types are delivered first: they never expire). A room's sends are at
// least room_min_interval apart, also across rounds (RoomPacing); when no room is ready it sleeps
// until the first one is. A failed row's later rows of its room are released (never overtaken); a
// row the breaker kept back is given back uncharged.
//
// Before each wave: a stop request, or a lease left shorter than publish_timeout + the mark
// margin, releases the rows left. After each wave the results are marked (RoundMarks::Flush); a
// failing mark ends the sending; a global rate limit or the open breaker gives back the rest.
// The breaker's opening and closing are logged once each.
//
// One thread (the worker's).
#pragma once

#include <vector>

#include "core/publisher.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"
#include "worker/expiry_policy.h"
#include "worker/loop_clock.h"
#include "worker/loop_waits.h"
#include "worker/pack_rule.h"
#include "worker/room_pacing.h"
#include "worker/round_context.h"
#include "worker/round_result.h"
#include "worker/worker_options.h"

namespace room_outbox::relay {

class RoomSender {
 public:
  // Every reference must outlive the sender.
  RoomSender(const WorkerOptions& options, core::Publisher& publisher, LoopClock& clock,
             LoopSignal& signal, RoomPacing& pacing, LoopWaits& waits, Metrics& metrics,
             Logger& logger);

  // Sends `round`'s queued rows until none is left or the sending ends (see above).
  SendOutcome Send(RoundContext& round);

 private:
  // One message's rows: a room's front row and the rows packed with it (PackRule), in order.
  using Pack = std::vector<const QueuedRow*>;

  bool WaveFits(RoundContext& round, SendOutcome& sent);
  std::vector<Pack> TakeWave(RoundContext& round);
  Pack PackFrom(RoundContext& round, const QueuedRow& front);
  void PopUnsent(RoundContext& round);
  void SendWave(RoundContext& round, const std::vector<Pack>& wave, SendOutcome& sent);
  void RecordOutcome(RoundContext& round, const Pack& pack, const core::PublishOutcome& outcome,
                     SendOutcome& sent);
  void NoteBreaker(const core::PublishOutcome& outcome);
  bool AfterWave(RoundContext& round, const SendOutcome& sent);
  LogLine Line(std::string_view message) const;

  const WorkerOptions& options_;
  const ExpiryPolicy expiry_;
  const PackRule pack_rule_;
  core::Publisher& publisher_;
  LoopClock& clock_;
  LoopSignal& signal_;
  RoomPacing& pacing_;
  LoopWaits& waits_;
  Metrics& metrics_;
  Logger& logger_;
};

}  // namespace room_outbox::relay
