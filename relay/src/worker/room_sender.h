// RoomSender: sends one claim's queued rows, room by room, as one stream (Publisher::PublishStream,
// the sender being its MessageFeed). A room has at most one message in flight; its next message
// goes out as soon as the one before it is answered (and room_min_interval allows), whatever the
// other rooms' messages are doing; at most max_in_flight messages are in flight at once, each
// bounded by publish_timeout. A message carries one row, or with pack_max_events > 1 a pack of the
// room's consecutive rows (PackRule), and its one answer decides every row of it. Rows of types
// the publisher never sends are delivered in order without a send slot or pacing. A row that
// ExpiryPolicy finds too old at the claim's server now when it reaches the front of its room
// ([tencent_im.max_age_by_type]) is parked as expired without a send or pacing, and its room's
// next row goes on (never-sent types are delivered first: they never expire). Neither happens
// while a message of the room is in flight. A room's sends are at least its gap apart, also
// across rounds (RoomPacing: room_min_interval, more for a room IM refused); when no room is ready
// and nothing is in flight it sleeps until the first one is. A failed message's later rows of its
// room are released (never overtaken); a message the breaker kept back is given back uncharged.
//
// Marks follow the answers in batches (RoundMarks::Flush): when max_in_flight messages were
// answered since the last marks, when kMarkDelay has passed since the first of them while the
// stream waits, and whenever nothing is in flight. A relay killed mid-claim therefore leaves at
// most the messages in flight and the answered ones not yet marked (together at most
// 2 x max_in_flight messages) delivered but unmarked; the next claim resends them, in room order.
//
// Before each message: a stop request, or a lease left shorter than publish_timeout + the mark
// margin, releases the rows left (the messages in flight finish). A failing mark ends the sending
// (the rows left are released); so do the open breaker and a global rate limit no request budget
// took, after the answer that showed them (one the publisher's budget took slows the budget and
// the sending goes on through it). The breaker's opening and closing are logged once each.
//
// One thread (the worker's); the MessageFeed calls come inside Send only.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
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

// The longest the results of answered messages wait for their marks while the stream waits for
// more answers: short next to a delivery's latency, long enough to mark several answers at once.
inline constexpr std::chrono::milliseconds kMarkDelay{10};

class RoomSender final : public core::MessageFeed {
 public:
  // Every reference must outlive the sender.
  RoomSender(const WorkerOptions& options, core::Publisher& publisher, LoopClock& clock,
             LoopSignal& signal, RoomPacing& pacing, LoopWaits& waits, Metrics& metrics,
             Logger& logger);

  // Sends `round`'s queued rows until none is left or the sending ends (see above).
  SendOutcome Send(RoundContext& round);

  // MessageFeed, called by the publisher inside Send.
  std::optional<core::FeedMessage> Next() override;
  void Done(size_t tag, core::PublishOutcome outcome) override;
  std::chrono::milliseconds Pause() override;
  bool Idle() override;

 private:
  // One message's rows: a room's front row and the rows packed with it (PackRule), in order.
  using Pack = std::vector<const QueuedRow*>;
  struct InFlight {
    Pack pack;
    core::PublishMessage message;
  };

  bool SendingGoesOn();
  void EndSending();
  void PopUnsent();
  // A row that needs no send: a type the publisher never sends, or expired (ExpiryPolicy).
  bool Unsent(const OutboxRow& row) const;
  // Settles such a row: skipped (marked published) or parked as expired.
  void Settle(const OutboxRow& row);
  Pack PackFrom(const QueuedRow& front);
  static core::PublishMessage MessageOf(const Pack& pack);
  void RecordOutcome(const Pack& pack, const core::PublishOutcome& outcome);
  void NoteBreaker(const core::PublishOutcome& outcome);
  bool FlushMarks();
  // Milliseconds until the first room with rows left and nothing in flight may be sent to.
  int64_t ReadyInMs(int64_t now) const;
  bool InFlightRoom(const std::string& queue) const { return rooms_in_flight_.count(queue) != 0; }
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

  // The round being sent (Send), and what its sending did so far.
  RoundContext* round_ = nullptr;
  SendOutcome sent_;
  std::unordered_map<size_t, InFlight> in_flight_;  // by tag; node-based: messages stay put
  std::unordered_set<std::string> rooms_in_flight_;
  size_t next_tag_ = 0;
  size_t unmarked_messages_ = 0;  // answered since the last marks
  int64_t unmarked_since_ = 0;    // when the first of them was answered
  bool ended_ = false;            // the sending ended: what is left was released
  bool breaker_seen_open_ = false;
  bool in_burst_ = false;  // messages handed out since the last answer or wait (SendOutcome::waves)
};

}  // namespace room_outbox::relay
