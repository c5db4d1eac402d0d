package dbtest

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
)

func newWriter(t *testing.T, o outboxsql.Options) *outboxsql.Writer {
	t.Helper()
	if o.NodeID == "" {
		o.NodeID = "gosql-test"
	}
	w, err := outboxsql.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func gift(id string) (outboxsql.Command, []outboxsql.Event) {
	cmd := outboxsql.Command{CommandID: id, RoomID: "room-" + id, CommandType: "SendGift",
		RequestID: "req-" + id, RoomSeq: 7, Payload: `{"gift":"rose"}`}
	return cmd, []outboxsql.Event{
		{EventID: id + "-gift", EventType: "RoomGiftSent", RoomSeq: 7, Payload: `{"gift":"rose"}`},
		{EventID: id + "-heat", EventType: "RoomHeatChanged", RoomSeq: 7, Payload: `{"heat":3}`},
	}
}

// The rows carry what docs/sql-contract.md says, every time on the server's clock, also when the
// caller's session runs in another time zone (the package never changes the session).
func TestWriteInTheCallersTransactionWritesTheContractsRows(t *testing.T) {
	env := environment(t)
	db := env.open(t, "time_zone=%27-05%3A00%27")
	w := newWriter(t, outboxsql.Options{GroupIDPrefix: "live_"})
	cmd, events := gift("gosql-rows")
	tx, err := db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.Write(context.Background(), tx, cmd, events)
	if err != nil || res.Status != outboxsql.Written || len(res.Events) != 2 ||
		res.Events[0] != (outboxsql.EventDelivery{EventID: "gosql-rows-gift", State: outboxsql.Pending}) ||
		res.Events[1] != (outboxsql.EventDelivery{EventID: "gosql-rows-heat", State: outboxsql.Skipped}) {
		t.Fatalf("Write: %+v, %v", res, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	now := scalar(t, db, "SELECT CAST(UNIX_TIMESTAMP() * 1000 AS SIGNED)") // time-zone free
	near := func(ms int64) bool { return ms > now-60000 && ms <= now+1000 }
	var logged struct {
		room, typ, req, payload string
		seq, created            int64
	}
	if err := db.QueryRow("SELECT room_id, command_type, request_id, room_seq, payload, created_at_ms "+
		"FROM room_command_log WHERE command_id = 'gosql-rows'").Scan(&logged.room, &logged.typ,
		&logged.req, &logged.seq, &logged.payload, &logged.created); err != nil {
		t.Fatal(err)
	}
	if logged.room != "room-gosql-rows" || logged.typ != "SendGift" || logged.req != "req-gosql-rows" ||
		logged.seq != 7 || logged.payload != `{"gift":"rose"}` || !near(logged.created) {
		t.Fatalf("command log row %+v (server now %d)", logged, now)
	}
	pending := scalar(t, db, "SELECT COUNT(*) FROM room_outbox WHERE event_id = 'gosql-rows-gift' AND "+
		"status = 'pending' AND event_type = 'RoomGiftSent' AND room_id = 'room-gosql-rows' AND "+
		"command_id = 'gosql-rows' AND request_id = 'req-gosql-rows' AND retry_count = 0 AND "+
		"drop_count = 0 AND pack_size = 0 AND last_error IS NULL AND claim_token IS NULL AND "+
		"published_at_ms IS NULL AND parked_at_ms IS NULL AND "+
		"created_at_ms = updated_at_ms AND next_attempt_at_ms = created_at_ms")
	skipped := scalar(t, db, "SELECT COUNT(*) FROM room_outbox WHERE event_id = 'gosql-rows-heat' AND "+
		"status = 'published' AND claim_token IS NULL AND published_at_ms = created_at_ms")
	if pending != 1 || skipped != 1 {
		t.Fatalf("pending row as the contract says: %d, skipped row published: %d", pending, skipped)
	}
	if at := scalar(t, db, "SELECT next_attempt_at_ms FROM room_outbox WHERE event_id = 'gosql-rows-gift'"); !near(at) {
		t.Fatalf("next_attempt_at_ms %d is not the server's now %d (session time_zone -05:00)", at, now)
	}
}

func TestARepeatedCommandIsADuplicateAndWritesNothing(t *testing.T) {
	env := environment(t)
	db := env.open(t, "")
	w := newWriter(t, outboxsql.Options{})
	cmd, events := gift("gosql-dup")
	if res, err := w.Commit(context.Background(), db, cmd, events, nil); err != nil || res.Status != outboxsql.Committed {
		t.Fatalf("first Commit: %+v, %v", res, err)
	}
	ran := false
	res, err := w.Commit(context.Background(), db, cmd, events, func(*sql.Tx) error { ran = true; return nil })
	if err != nil || res.Status != outboxsql.Duplicate || ran {
		t.Fatalf("second Commit: %+v, %v, callback ran %v; want Duplicate, no callback", res, err, ran)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if res, err := w.Write(context.Background(), tx, cmd, events); err != nil || res.Status != outboxsql.Duplicate {
		t.Fatalf("Write of a committed command: %+v, %v", res, err)
	}
	if n := scalar(t, db, "SELECT COUNT(*) FROM room_outbox WHERE command_id = 'gosql-dup'"); n != 2 {
		t.Fatalf("%d rows after the duplicates, want 2", n)
	}
}

// A second transaction of the same command waits for the first (the locking read) and is told
// Duplicate once the first commits.
func TestTheSameCommandInTwoOpenTransactionsIsOneCommitAndOneDuplicate(t *testing.T) {
	env := environment(t)
	db := env.open(t, "")
	w := newWriter(t, outboxsql.Options{})
	cmd, events := gift("gosql-race")
	first, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback() // after Commit: nothing to undo; on a failure: no lock left behind
	if res, err := w.Write(context.Background(), first, cmd, events); err != nil || res.Status != outboxsql.Written {
		t.Fatalf("first Write: %+v, %v", res, err)
	}
	second := make(chan outboxsql.Status, 1)
	go func() {
		tx, err := db.Begin()
		if err != nil {
			second <- outboxsql.Failed
			return
		}
		defer tx.Rollback()
		res, err := w.Write(context.Background(), tx, cmd, events)
		if err != nil {
			t.Errorf("second Write: %v", err)
		}
		second <- res.Status
	}()
	// The second command log insert is on the server (it waits on the first's key there: MariaDB
	// shows such a wait as a running statement, not as a LOCK WAIT transaction).
	eventually(t, 20*time.Second, "the second transaction's insert on the server", func() bool {
		return scalar(t, db, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() "+
			"AND INFO LIKE 'INSERT INTO room_command_log%'") > 0
	})
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-second:
		if s != outboxsql.Duplicate {
			t.Fatalf("second Write: %s, want duplicate", s)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("the second Write did not end after the first committed")
	}
}

func TestACheckOrCallbackFailureCommitsNothing(t *testing.T) {
	env := environment(t)
	db := env.open(t, "")
	w := newWriter(t, outboxsql.Options{GroupIDPrefix: "live_"})
	cmd, events := gift("gosql-refused")
	events[0].Payload = `{"x":"` + strings.Repeat("y", 13000) + `"}`
	res, err := w.Commit(context.Background(), db, cmd, events, nil)
	if res.Status != outboxsql.Failed || !errors.Is(err, outboxsql.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "event gosql-refused-gift: the IM request body would be") {
		t.Fatalf("oversized event: %+v, %v", res, err)
	}
	sentinel := errors.New("room moved on")
	cmd, events = gift("gosql-callback")
	res, err = w.Commit(context.Background(), db, cmd, events, func(tx *sql.Tx) error {
		if _, err := tx.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES ('gosql-callback', 1, '', 0)"); err != nil {
			return err
		}
		return sentinel
	})
	if res.Status != outboxsql.Failed || !errors.Is(err, outboxsql.ErrStatements) || !errors.Is(err, sentinel) {
		t.Fatalf("failing callback: %+v, %v", res, err)
	}
	for _, q := range []string{
		"SELECT COUNT(*) FROM room_command_log WHERE command_id IN ('gosql-refused', 'gosql-callback')",
		"SELECT COUNT(*) FROM room_outbox WHERE command_id IN ('gosql-refused', 'gosql-callback')",
		"SELECT COUNT(*) FROM room_snapshot WHERE room_id = 'gosql-callback'",
	} {
		if n := scalar(t, db, q); n != 0 {
			t.Fatalf("%s: %d", q, n)
		}
	}
}

// A command of 40 events goes out in three INSERTs (16 rows each at most), in order.
func TestManyEventsKeepTheirOrder(t *testing.T) {
	env := environment(t)
	db := env.open(t, "")
	w := newWriter(t, outboxsql.Options{})
	cmd, _ := gift("gosql-many")
	var events []outboxsql.Event
	for i := 0; i < 40; i++ {
		events = append(events, outboxsql.Event{EventID: cmd.CommandID + "-" + string(rune('A'+i)),
			EventType: "RoomGiftSent", RoomSeq: int64(i)})
	}
	if res, err := w.Commit(context.Background(), db, cmd, events, nil); err != nil || len(res.Events) != 40 {
		t.Fatalf("Commit: %+v, %v", res, err)
	}
	rows, err := db.Query("SELECT event_id FROM room_outbox WHERE command_id = 'gosql-many' ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for i := 0; rows.Next(); i++ {
		var id string
		if err := rows.Scan(&id); err != nil || id != events[i].EventID {
			t.Fatalf("row %d is %s (%v), want %s", i, id, err, events[i].EventID)
		}
	}
}
