// room-sim's own statement (its table is sim/room_snapshot.sql): the room's snapshot, written
// through the hook's caller statements in the transaction of the command. A form MariaDB and
// MySQL both accept without deprecation: MySQL 8.0.20 deprecates VALUES(col) in ON DUPLICATE KEY
// UPDATE and MariaDB has no row alias, so the new values are bound a second time.
// Placeholders: room_id, room_seq, state, updated_at_ms, then room_seq, state, updated_at_ms.
#pragma once

namespace room_outbox::sim {

inline constexpr const char* kUpsertRoomSnapshot =
    "INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES (?, ?, ?, ?) "
    "ON DUPLICATE KEY UPDATE room_seq = ?, state = ?, updated_at_ms = ?";

}  // namespace room_outbox::sim
