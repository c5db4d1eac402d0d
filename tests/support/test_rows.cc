#include "support/test_rows.h"

#include <chrono>
#include <sstream>

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

std::vector<std::string> PendingRowsSql(const std::string& prefix, int count, int rooms,
                                        int64_t due_ms) {
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::vector<std::string> statements;
  std::ostringstream sql;
  int in_statement = 0;
  for (int i = 0; i < count; ++i) {
    const std::string event_id = prefix + "-" + std::to_string(i);
    const std::string room_id = prefix + "-room-" + std::to_string(i % rooms);
    if (in_statement == 0) {
      sql.str("");
      sql << "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, request_id, "
             "envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms) "
             "VALUES ";
    } else {
      sql << ",";
    }
    sql << "(" << SqlQuote(event_id) << ",'RoomGiftSent'," << SqlQuote(room_id) << ","
        << SqlQuote("cmd-" + event_id) << "," << SqlQuote("req-" + event_id) << ","
        << SqlQuote(TestEnvelope(event_id, room_id, i / rooms + 1, "node-test")) << ",'pending',0,"
        << due_ms << "," << now << "," << now << ")";
    if (++in_statement == 200 || i + 1 == count) {
      statements.push_back(sql.str());
      in_statement = 0;
    }
  }
  return statements;
}

}  // namespace room_outbox::testing
