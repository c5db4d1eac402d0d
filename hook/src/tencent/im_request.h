// The send_group_msg request: URL and body (TENCENT_IM.md §1, §2a, §3).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "result.h"
#include "room_outbox/envelope.h"

namespace room_outbox {

// The body's Random field for an event: the first 4 bytes (big-endian) of SHA-256(event_id).
// The same on every retry, so IM drops a resend within five minutes as a duplicate.
uint32_t RandomForEvent(std::string_view event_id);

// {"GroupId": prefix + room_id, "Random": RandomForEvent(event_id),
//  "MsgBody": [{"MsgType": "TIMCustomElem",
//               "MsgContent": {"Data": <EncodeEnvelope>, "Desc": event_type, "Ext": event_id}}]}
// compact, with this key order, so the same envelope always gives the same bytes.
// kInvalidArgument when the envelope does not encode or room_id is empty.
Result<std::string> BuildSendGroupMsgBody(const Envelope& envelope,
                                          std::string_view group_id_prefix);

// endpoint + "/v4/group_open_http_svc/send_group_msg?sdkappid=..&identifier=..&usersig=..
// &random=..&contenttype=json". `endpoint` has no trailing slash. The identifier is
// percent-encoded; the usersig alphabet (A-Z a-z 0-9 * - _) needs no encoding.
// `url_random` is the per-request random of the REST envelope, not the body's Random.
std::string BuildSendGroupMsgUrl(std::string_view endpoint, uint64_t sdk_app_id,
                                 std::string_view identifier, std::string_view usersig,
                                 uint32_t url_random);

}  // namespace room_outbox
