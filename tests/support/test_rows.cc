#include "support/test_rows.h"

#include "core/envelope_codec.h"

namespace room_outbox::testing {

std::string SqlQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string TestEnvelope(const std::string& event_id, const std::string& room_id, int64_t seq,
                         const std::string& node_id) {
  Envelope e;
  e.event_id = event_id;
  e.event_type = "RoomGiftSent";
  e.room_id = room_id;
  e.room_seq = seq;
  e.command_id = "cmd-" + event_id;
  e.request_id = "req-" + event_id;
  e.node_id = node_id;
  e.occurred_at_ms = 1;
  e.payload = R"({"gift":"rose"})";
  return core::EncodeEnvelope(e).value();
}

}  // namespace room_outbox::testing
