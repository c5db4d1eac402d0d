// Building outbox rows by hand in tests that write SQL directly (operator commands, parking,
// relay processes): quoting, a valid envelope, and the server-clock expression.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace room_outbox::testing {

// The server's clock in epoch ms, as the store writes it (sql::kServerNowMs), for SQL literals.
inline constexpr const char* kServerNowSql = "CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED)";

// `s` as a single-quoted SQL string literal, backslashes and quotes escaped.
std::string SqlQuote(const std::string& s);

// A valid RoomGiftSent envelope (JSON text) for `event_id` of `room_id` at `seq`.
std::string TestEnvelope(const std::string& event_id, const std::string& room_id, int64_t seq,
                         const std::string& node_id);

// INSERT statements (200 rows each) for `count` pending RoomGiftSent rows "<prefix>-<i>" spread
// over `rooms` rooms "<prefix>-room-<i % rooms>" in commit order, due at `due_ms` (0: now).
std::vector<std::string> PendingRowsSql(const std::string& prefix, int count, int rooms,
                                        int64_t due_ms = 0);

}  // namespace room_outbox::testing
