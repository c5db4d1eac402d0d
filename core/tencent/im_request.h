// The send_group_msg request: URL and body (docs/relay.md, "The request body").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/json_writer.h"
#include "core/result.h"
#include "room_outbox/envelope.h"
#include "room_outbox/options.h"

namespace room_outbox::core {

// The body's Random for a row: uint32(row_id + drop_generation * kRandomStride) mod 2^32.
//
// Both the hook and the relay know the row id, so both send the same Random for the same row,
// and the body of a resend is byte-identical after an unknown outcome (IM can dedupe it). After a
// definite drop (MsgDropReason) the caller passes drop_generation + 1 and gets another Random, so
// IM cannot swallow the resend as a duplicate of the dropped message.
//
// Why distinct sends never share a Random (R(a,g) = R(b,h) iff a - b = (h - g) * S mod 2^32):
//  - same generation (g = h): a = b mod 2^32, i.e. rows 2^32 ids apart; distinct rows of one
//    outbox never get there;
//  - same row (a = b): (h - g) * S = 0 mod 2^32; S is odd, hence invertible mod 2^32, so
//    h = g mod 2^32: every generation of a row has its own Random;
//  - distinct rows whose generations differ by k, 0 < |k| <= G: |a - b| >= M(G), the least
//    distance of k * S mod 2^32 from 0 over 1 <= k <= G: M(15) = 147,926,629,
//    M(63) = 34,920,769, M(255) = 8,243,553, M(1023) = 1,946,557 (exhaustive, checked in
//    tests/unit/im_request_test.cc).
// So within any 5-minute window (IM's dedupe horizon), if the ids of the rows sent span fewer
// than M(G) and their drop generations differ by at most G, no two distinct sends share a
// Random: e.g. up to 63 drops apart for rows less than 34.9 million ids apart, while IM's
// default budget of 200 requests/s sends 60,000 messages in 5 minutes. S is 2^32 / golden ratio
// (odd), which keeps M(G) near its best for every G at once.
inline constexpr uint32_t kRandomStride = 0x9E3779B9u;
uint32_t RandomForRow(int64_t row_id, uint32_t drop_generation);

// The body's Random for a message of `events` events (pack_max_events) whose first row is
// `first_row_id`: uint32(first_row_id + drop_generation * kRandomStride + (events - 1) *
// kPackStride), so RandomForRow for one event. A resend of the same pack (same first row, same
// number of events, same drop generation) has the same Random; two packs differ in their first row
// or in their number of events, and then (R(a,g,n) = R(b,h,m) iff a - b = (h - g) * S + (m - n) * T
// mod 2^32) they share a Random only when their first rows are at least N(G) ids apart, the least
// distance of k * S + j * T mod 2^32 from 0 over |k| <= G, 1 <= |j| <= 99: N(0) = 10,460,417,
// N(15) = 2,480,188, N(63) = 319,799 (exhaustive, checked in tests/unit/im_request_test.cc).
// T was chosen by a search for the largest N(63) whose N(15) stays above 2 million.
inline constexpr uint32_t kPackStride = 0x60B27F5Bu;
uint32_t RandomForPack(int64_t first_row_id, uint32_t drop_generation, size_t events);

// The Desc of a packed message (RoomEventBatch form): its Data is {"events":[<envelope>,...]}.
inline constexpr std::string_view kRoomEventBatchDesc = "RoomEventBatch";

// {"GroupId": prefix + room_id, "Random": random, "MsgPriority": "High"|"Normal"|"Low",
//  "MsgBody": [{"MsgType": "TIMCustomElem",
//               "MsgContent": {"Data": <EncodeEnvelope>, "Desc": event_type, "Ext": event_id}}]}
// compact, with this key order, so the same inputs always give the same bytes.
// kInvalidArgument when the envelope does not encode or room_id is empty.
Result<std::string> BuildSendGroupMsgBody(const Envelope& envelope,
                                          std::string_view group_id_prefix, uint32_t random,
                                          MsgPriority priority);

// What a body is made of, as views: the envelope's encoding (EncodeEnvelope) and the fields of
// that envelope the body repeats.
// With `batch` (two events or more: a pack), the RoomEventBatch form: Data =
// {"events":[batch[0],batch[1],...]}, Desc = "RoomEventBatch", Ext = the first event's id
// (event_id); envelope_json and event_type are not used.
struct SendGroupMsgParts {
  std::string_view envelope_json;  // Data
  std::string_view room_id;        // GroupId = group_id_prefix + room_id
  std::string_view event_type;     // Desc
  std::string_view event_id;       // Ext
  std::string_view group_id_prefix;
  uint32_t random = 0;
  MsgPriority priority = MsgPriority::kHigh;
  std::span<const std::string_view> batch;  // each event's EncodeEnvelope text, in room order
};

// The body above written into `writer` (cleared first; its buffer is reused). kInvalidArgument
// when room_id is empty or the group id is not valid UTF-8. Every body is built here: the
// publisher's and the commit-time size check's.
Status WriteSendGroupMsgBody(JsonWriter& writer, const SendGroupMsgParts& parts);

// The length of a RoomEventBatch body, event by event, never under what WriteSendGroupMsgBody
// writes (Random and MsgPriority are counted at their widest: at most 12 bytes over): lets a pack
// end before the event that would take its body past max_body_bytes without writing a body.
class PackBodySize {
 public:
  PackBodySize(std::string_view group_id_prefix, std::string_view room_id,
               std::string_view first_event_id);
  // The body's length with one more event whose EncodeEnvelope text is `envelope_json`.
  size_t With(std::string_view envelope_json) const;
  void Add(std::string_view envelope_json);
  size_t events() const { return events_; }

 private:
  size_t bytes_ = 0;  // the body with the events so far, the first without a comma before it
  size_t events_ = 0;
};

// The highest of two priorities (High > Normal > Low): a pack's MsgPriority is its events'
// highest.
MsgPriority HigherPriority(MsgPriority a, MsgPriority b);

// The body of `envelope` into `body`, its encoding taken from `envelope_json` when that is not
// empty (EncodeEnvelope(envelope), e.g. the row's stored text as DecodeEnvelope re-encoded it),
// else encoded into `scratch`. Fails as BuildSendGroupMsgBody.
Status WriteSendGroupMsgBody(JsonWriter& body, JsonWriter& scratch, const Envelope& envelope,
                             std::string_view envelope_json, std::string_view group_id_prefix,
                             uint32_t random, MsgPriority priority);

// The MsgPriority of an event type: priority_by_type[event_type] when present, else
// msg_priority.
MsgPriority PriorityForType(const TencentImOptions& options, std::string_view event_type);

// The path of send_group_msg below the endpoint.
inline constexpr std::string_view kSendGroupMsgPath = "/v4/group_open_http_svc/send_group_msg";

// The request target of send_group_msg (path and query, what the request line carries):
// kSendGroupMsgPath + "?sdkappid=..&identifier=..&usersig=..&random=..&contenttype=json". The
// identifier is percent-encoded once, at construction; the usersig alphabet (A-Z a-z 0-9 * - _)
// needs no encoding. One buffer is reused for every request: For() allocates nothing once the
// buffer has grown to a target's length.
class SendGroupMsgTarget {
 public:
  SendGroupMsgTarget(uint64_t sdk_app_id, std::string_view identifier);

  // The target for `usersig` and `url_random` (the per-request random of the REST envelope, not
  // the body's Random); valid until the next call.
  const std::string& For(std::string_view usersig, uint32_t url_random);

 private:
  std::string text_;
  size_t fixed_ = 0;  // the length of the part up to "&usersig="
};

// endpoint + the request target above. `endpoint` has no trailing slash.
std::string BuildSendGroupMsgUrl(std::string_view endpoint, uint64_t sdk_app_id,
                                 std::string_view identifier, std::string_view usersig,
                                 uint32_t url_random);

}  // namespace room_outbox::core
