// Publisher: delivers envelopes to Tencent IM (the only sink in V1).
// The libcurl implementation is TencentImPublisher (tencent/tencent_im_publisher.h); unit tests
// use MockPublisher (tests/mocks/mock_publisher.h).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "room_outbox/envelope.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

enum class PublishStatus {
  kPublished,     // IM accepted it: HTTP 200, ActionStatus OK, ErrorCode 0, no MsgDropReason
  kSkipped,       // an event type not sent to IM (skip_event_types): a no-op success
  kRetryable,     // worth trying again: network error, HTTP 5xx, IM internal error, expired
                  // UserSig, and an IM ErrorCode missing from the table (not known to be
                  // terminal: retried like the rest, never parked)
  kRateLimited,   // a frequency limit (60007, 60011, 60018, 60019, 10006, 10023, MsgDropReason)
  kUnknown,       // the outcome is unknown: no answer in time after the request went out, the
                  // connection dropped after it went out, or the answer was too large to read.
                  // IM may have it. (Counted under the metrics label "timeout".)
  kPermanent,     // the one meaning of "permanent": a refusal that a retry alone does not cure
                  // (a bad group, a bad signature, HTTP 4xx other than 408/429, a libcurl error
                  // such as a failed TLS verification). Says nothing about whom it concerns: the
                  // scope does. Retried like any failure; only scope kUndeliverableRow may be
                  // parked.
  kNotAttempted,  // not sent: the app-scope circuit breaker is open. Do not charge the row.
};

// "published", "skipped", "retryable", "rate_limited", "unknown", "permanent", "not_attempted".
const char* PublishStatusName(PublishStatus status);

// Whom a failure concerns, i.e. what the caller should hold back (docs/relay.md, failure scopes).
// Decided by one table (tencent/im_response.h).
enum class FailureScope {
  kNone,              // delivered or skipped
  kRow,               // this row failed for now (10002, 5xx, timeout, dropped connection, ...):
                      // reschedule the row
  kRoom,              // this room's group refuses for now (MsgDropReason MsgFreqCtrl, 10023):
                      // reschedule that room's rows only; other rooms go on, the budget stays
  kApp,               // nobody can succeed (bad key or identifier, app disabled, 70050, ...): the
                      // publisher's circuit breaker opened; also the scope of kNotAttempted
  kUndeliverableRow,  // a permanent refusal of this row as it is (80001, 80002, 10004, 10010,
                      // ...): the only scope parking (park_permanent_after) acts on
  kGlobalRate,        // the app's REST rate limit (60007, 60011, 60018, 60019, 10006, HTTP 429):
                      // the process budget slows down
};

// "none", "row", "room", "app", "undeliverable_row", "global_rate".
const char* FailureScopeName(FailureScope scope);

// A change of the publisher's circuit breaker caused by one outcome; the caller logs kOpened
// and kClosed once each (with the outcome's error).
enum class BreakerTransition {
  kNone,
  kOpened,    // closed -> open: this outcome was an app-scope failure
  kReopened,  // the probe failed again: open for another cooldown
  kClosed,    // the probe succeeded
};

struct PublishOutcome {
  PublishStatus status = PublishStatus::kRetryable;
  // Short, secret-free reason when not delivered, e.g. "im error 10010: group not found" or
  // "timeout after 3000ms". Never the secret key, the UserSig or the whole response body.
  std::string error;
  int http_status = 0;    // 0 when no HTTP answer arrived
  int im_error_code = 0;  // ErrorCode from the body, when there was one
  std::chrono::milliseconds latency{0};
  FailureScope scope = FailureScope::kRow;
  // App scope: the breaker stays open at least this long (70050: 60 s); zero otherwise.
  std::chrono::milliseconds min_cooldown{0};
  // IM answered OK with a MsgDropReason: definitely not delivered. Resend with
  // drop_generation + 1 so IM cannot drop the resend as a duplicate of this one.
  bool definite_drop = false;
  BreakerTransition breaker = BreakerTransition::kNone;
  // A global rate limit IM answered that the publisher's request budget took: the budget slowed
  // itself, so the caller may go on sending through this publisher, which now paces below the
  // limit. False for every other outcome, and when no budget paces the publisher.
  bool budget_slowed = false;

  bool delivered() const {
    return status == PublishStatus::kPublished || status == PublishStatus::kSkipped;
  }
  // False when no request was made for it (breaker open) or none was needed (skipped).
  bool attempted() const {
    return status != PublishStatus::kNotAttempted && status != PublishStatus::kSkipped;
  }
};

// An event after the first of a packed message.
struct PackedEvent {
  const Envelope* envelope = nullptr;
  // EncodeEnvelope(*envelope), or empty: the publisher encodes it. Must stay valid for the call.
  std::string_view envelope_json;
};

// One message to publish: one outbox row, or (with `rest`) the first row of a pack.
struct PublishMessage {
  int64_t row_id = 0;  // room_outbox.id: the body's Random is derived from it (RandomForRow)
  // How many times IM definitely dropped this row so far (outcomes with definite_drop). 0 on the
  // first try and after unknown outcomes, so a resend is byte-identical and IM can dedupe it.
  uint32_t drop_generation = 0;
  Envelope envelope;
  // EncodeEnvelope(envelope) when the caller has it (the row's envelope as the hook wrote it, or
  // as DecodeEnvelope re-encoded it): the body carries it as Data without encoding the envelope
  // again. Empty: the publisher encodes `envelope`. Must stay valid for the call.
  std::string_view envelope_json;
  // Overrides [tencent_im] msg_priority / priority_by_type for this message when set.
  std::optional<MsgPriority> priority;
  // The pack's events after the first (consecutive pending events of the envelope's room, in room
  // order; pack_max_events): the message is then one RoomEventBatch message whose Random is
  // RandomForPack(row_id, drop_generation, 1 + rest.size()) and whose MsgPriority is the highest
  // of its events'. Empty: the single form. Must stay valid for the call.
  std::vector<PackedEvent> rest;

  size_t events() const { return 1 + rest.size(); }
};

// One message a MessageFeed hands out, and the tag that names it in MessageFeed::Done.
struct FeedMessage {
  const PublishMessage* message = nullptr;  // valid until Done(tag)
  size_t tag = 0;
};

// The caller's side of Publisher::PublishStream: it hands out messages as they become ready (a
// room's next message once the one before it was answered) and takes each one's outcome as it
// comes. Every call comes from the thread that called PublishStream, inside that call.
class MessageFeed {
 public:
  virtual ~MessageFeed() = default;

  // The next message to send now, or nullopt when none is ready now. Asked only when the stream
  // could start it at once (a request slot free, nothing else waiting to start).
  virtual std::optional<FeedMessage> Next() = 0;
  // The outcome of the message Next handed out with `tag`: exactly once per tag, in any order
  // (answers come as they come). Delivered, failed, kept back by the breaker (kNotAttempted) or
  // skipped alike.
  virtual void Done(size_t tag, PublishOutcome outcome) = 0;
  // Requests are in flight and Next had nothing more: the feed's chance to do its own work
  // (e.g. write the results gathered so far). Returns how long the stream may wait for an answer
  // before it asks Next again (a message that comes ready by time alone, e.g. a paced room).
  virtual std::chrono::milliseconds Pause() = 0;
  // Nothing is in flight (Next had nothing, or a wave was answered whole): the feed does its own
  // work, then waits until it has a message ready (true: the stream asks Next again; at once when
  // one is ready) or says it will have none (false: the stream ends).
  virtual bool Idle() = 0;
};

class Publisher {
 public:
  virtual ~Publisher() = default;

  // Publishes one message; returns within `timeout` (plus scheduling noise). While the breaker
  // is open it returns kNotAttempted at once, without a request.
  virtual PublishOutcome Publish(const PublishMessage& message,
                                 std::chrono::milliseconds timeout) = 0;

  // False for an event type that is never sent (skip_event_types): publishing it is a no-op
  // success (kSkipped). Lets callers deliver such rows without a send slot or a room's pace.
  virtual bool Sends(std::string_view event_type) const = 0;

  // Publishes several messages with up to `max_in_flight` requests open at once, each bounded
  // by its own `timeout`. Returns one outcome per message, in the same order. Callers pass at
  // most one message per room when per-room order matters. Messages the breaker keeps back
  // (open, or the probe is another message) get kNotAttempted.
  virtual std::vector<PublishOutcome> PublishMany(std::span<const PublishMessage> messages,
                                                  std::chrono::milliseconds timeout,
                                                  size_t max_in_flight) = 0;

  // Publishes what `feed` hands out until it has no more (MessageFeed::Idle false) and nothing is
  // in flight: up to `max_in_flight` requests at once, each bounded by `timeout` from the moment
  // it gets a request slot, each outcome handed to MessageFeed::Done as soon as it is known, and a
  // new message asked for as soon as a slot is free. The feed keeps per-room order: it hands out
  // a room's next message only after the one before it is Done. Messages the breaker keeps back
  // are Done with kNotAttempted. This default runs the stream in waves over PublishMany (a wave
  // is what Next hands out at once, at most max_in_flight messages; its outcomes are handed over
  // when the whole wave is answered, then Idle); TencentImPublisher starts each message as soon
  // as the feed has it.
  virtual void PublishStream(MessageFeed& feed, std::chrono::milliseconds timeout,
                             size_t max_in_flight);

  // True while the app-scope circuit breaker is open or half-open (the
  // room_outbox_im_breaker_open gauge).
  virtual bool breaker_open() const = 0;

  // Takes a new IM secret key (SIGHUP re-read the key file) and drops the cached UserSig, so
  // the next request carries a sig signed with the new key. May be called from another thread
  // than the publishing one: it waits for a publish call in progress to end.
  virtual void ReloadSecretKey(std::string secret_key) = 0;
};

}  // namespace room_outbox::core
