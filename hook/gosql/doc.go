// Package outboxsql is room-outbox for Go services built without cgo (CGO_ENABLED=0): it
// writes a room command's room_command_log row and its room_outbox rows into the caller's own
// database/sql transaction, exactly as the C++ hook writes them (docs/sql-contract.md, "Writing
// rows without the hook"), and wakes outbox-relay after COMMIT. The relay delivers the rows to
// Tencent IM, each room in order. There is no sync publish: every event goes out through the
// relay (within [wake] min_interval of the wake-up, else at its next poll_interval).
//
// It needs the standard library only and works with any database/sql driver for MySQL 8.0.1+
// or MariaDB 10.6+, and with the ORMs that hand out a *sql.Tx (sqlx, gorm, ent).
//
//	import outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
//
//	w, err := outboxsql.New(outboxsql.Options{GroupIDPrefix: "live_",
//		WakeSocket: "/run/outbox-relay/wake.sock"}) // the relay's group_id_prefix and [wake] socket
//	cmd := outboxsql.Command{CommandID: "cmd-42", RoomID: "room-7", CommandType: "SendGift",
//		RequestID: "req-9", RoomSeq: 12, Payload: `{"user_id":"u1","gift":"rose"}`}
//	events := []outboxsql.Event{{EventID: "evt-42-0", EventType: "RoomGiftSent", RoomSeq: 12,
//		Payload: `{"gift":"rose"}`}}
//	res, err := w.Commit(ctx, db, cmd, events, func(tx *sql.Tx) error {
//		_, err := tx.ExecContext(ctx, "UPDATE room_state SET room_seq = ? WHERE room_id = ?", 12, "room-7")
//		return err
//	})
//
// Commit runs the whole command: BEGIN, the command log row, the callback, the outbox rows,
// COMMIT, the wake-up. With a transaction of your own (an ORM's), call Write inside it and Wake
// after its COMMIT:
//
//	res, err := w.Write(ctx, tx, cmd, events) // Written, or Duplicate: roll back
//	... tx.Commit() ...
//	_ = w.Wake()
//
// # What it checks
//
// Before it writes anything, the checks of the C++ hook, with its messages: ids and names fit
// their columns and are UTF-8; every payload is a JSON object at most 63 levels deep and the
// envelope at most 64 KiB; the room's IM GroupId (GroupIDPrefix + room_id) is printable ASCII,
// at most 48 bytes, not "@TGS#..."; the IM request body of every event sent to IM fits
// MaxBodyBytes (12288). A refusal is an *Error with CodeInvalidArgument naming the command or
// event and what is wrong. The envelope is the hook's byte for byte (the payload written as the
// hook writes it: keys sorted, no whitespace). The shared test vectors in testdata/ hold the C++
// hook and this package to the same rows and messages.
//
// # Rows and clock
//
// A pending row is due at once with no claim token; a type in SkipEventTypes is written
// published. Every time in a row is the database server's clock, taken in the statement
// (UTC_TIMESTAMP(3), whatever the session's time_zone); the envelope's occurred_at_ms
// (information for clients) is the host's when the Event leaves it 0. Options must match the
// relay's config: GroupIDPrefix its [tencent_im] group_id_prefix, SkipEventTypes its
// skip_event_types, WakeSocket its [wake] socket.
//
// # Duplicates
//
// A repeated CommandID writes nothing and is reported Duplicate, not an error: the failed insert
// is confirmed with a locking read of the command log, so any driver's duplicate-key error is
// recognised and a transaction of the same command still open elsewhere is waited for.
//
// # Order
//
// Within a room the relay delivers rows in insert (id) order: commit a room's commands one after
// the other from one writer (the goroutine or Room Cell that owns the room).
package outboxsql
