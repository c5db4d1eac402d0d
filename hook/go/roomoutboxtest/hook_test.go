package roomoutboxtest_test

import (
	"context"
	"errors"
	"testing"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
	"github.com/room-outbox/room-outbox/hook/go/roomoutboxtest"
)

func gift(id string) (roomoutbox.Command, []roomoutbox.Event) {
	return roomoutbox.Command{CommandID: id, RoomID: "room-7", CommandType: "SendGift", RoomSeq: 2},
		[]roomoutbox.Event{
			{EventID: id + "-gift", EventType: "RoomGiftSent", RoomSeq: 2},
			{EventID: id + "-heat", EventType: "RoomHeatChanged", RoomSeq: 2},
		}
}

func snapshot(tx roomoutbox.Tx) error {
	return tx.Exec("UPDATE room_snapshot SET room_seq = ? WHERE room_id = ?", 2, "room-7")
}

func TestACommitIsRecordedWithItsStatementsAndEachEventsState(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	var c roomoutbox.Committer = hook // what the service depends on
	cmd, events := gift("cmd-1")
	res, err := c.Commit(cmd, events, snapshot)
	if err != nil || res.Status != roomoutbox.Committed || len(res.Events) != 2 ||
		res.Events[0].State != roomoutbox.Published || res.Events[1].State != roomoutbox.Skipped {
		t.Fatalf("Commit: %+v, %v", res, err)
	}
	commits := hook.Commits()
	if len(commits) != 1 || commits[0].Command != cmd || len(commits[0].Events) != 2 ||
		len(commits[0].Statements) != 1 || commits[0].Statements[0].Args[1] != "room-7" {
		t.Fatalf("recorded %+v", commits)
	}
	if got := hook.Committed(); len(got) != 1 || got[0].CommandID != "cmd-1" {
		t.Fatalf("Committed() = %+v", got)
	}
	hook.IMDown = true
	cmd2, events2 := gift("cmd-2")
	res, _ = hook.Commit(cmd2, events2, nil)
	if res.Events[0].State != roomoutbox.Pending || res.Events[0].Error == "" || res.Events[1].State != roomoutbox.Skipped {
		t.Fatalf("IM down: %+v, want the gift pending with a reason", res)
	}
}

func TestARepeatedCommandIsADuplicateWithoutRunningTheCallback(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	cmd, events := gift("cmd-dup")
	if _, err := hook.Commit(cmd, events, nil); err != nil {
		t.Fatal(err)
	}
	ran := false
	res, err := hook.Commit(cmd, events, func(roomoutbox.Tx) error { ran = true; return nil })
	if err != nil || res.Status != roomoutbox.Duplicate || ran || len(hook.Committed()) != 1 {
		t.Fatalf("repeat: %+v, %v, callback ran %v", res, err, ran)
	}
}

func TestACallbackOrStatementErrorRollsTheCommandBack(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	lost := errors.New("another command moved the room first")
	cmd, events := gift("cmd-race")
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		if n, err := tx.ExecAffected("UPDATE room_snapshot SET room_seq = 2 WHERE room_seq = 1"); err != nil || n != 1 {
			t.Fatalf("ExecAffected: %d, %v; want 1 row by default", n, err)
		}
		return lost
	})
	if res.Status != roomoutbox.Failed || !errors.Is(err, lost) || !errors.Is(err, roomoutbox.ErrCancelled) {
		t.Fatalf("callback error: %+v, %v; want Failed wrapping it, CodeCancelled", res, err)
	}
	dupKey := roomoutbox.NewError(roomoutbox.CodeAlreadyExists, "Duplicate entry 'room-7'", nil)
	hook.Exec = func(query string, args []interface{}) (int64, error) { return 0, dupKey }
	res, err = hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		_ = tx.Exec("INSERT INTO room_snapshot VALUES (?)", "room-7") // ignored: still fails the commit
		return nil
	})
	if res.Status != roomoutbox.Failed || !errors.Is(err, roomoutbox.ErrAlreadyExists) {
		t.Fatalf("failed statement ignored by the callback: %+v, %v", res, err)
	}
	if len(hook.Committed()) != 0 {
		t.Fatalf("a rolled back command counts as committed: %+v", hook.Committed())
	}
	hook.Exec = nil
	if res, err := hook.Commit(cmd, events, snapshot); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("the same command after the rollbacks: %+v, %v", res, err)
	}
}

func TestATxIsRefusedAfterItsCallbackAndADoneContextStopsTheCommit(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	var kept roomoutbox.Tx
	cmd, events := gift("cmd-kept")
	if _, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := kept.Exec("DELETE FROM room_snapshot"); !errors.Is(err, roomoutbox.ErrInvalidArgument) {
		t.Fatalf("Exec after the callback: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cmd, events = gift("cmd-cancelled")
	res, err := hook.CommitContext(ctx, cmd, events, snapshot)
	if res.Status != roomoutbox.Failed || !errors.Is(err, context.Canceled) || !errors.Is(err, roomoutbox.ErrCancelled) {
		t.Fatalf("done ctx: %+v, %v", res, err)
	}
}

func TestFailNextScriptsADatabaseOutageOrAnUnknownOutcome(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	hook.FailNext(roomoutbox.Failed, roomoutbox.NewError(roomoutbox.CodeUnavailable, "database down", nil))
	hook.FailNext(roomoutbox.Unknown, roomoutbox.NewError(roomoutbox.CodeUnavailable, "COMMIT answer lost", nil))
	cmd, events := gift("cmd-outage")
	ran := false
	count := func(roomoutbox.Tx) error { ran = true; return nil }
	res, err := hook.Commit(cmd, events, count)
	var e *roomoutbox.Error
	if res.Status != roomoutbox.Failed || !errors.As(err, &e) || !e.Retryable || ran {
		t.Fatalf("first: %+v, %v", res, err)
	}
	if res, err := hook.Commit(cmd, events, count); res.Status != roomoutbox.Unknown || err == nil || ran {
		t.Fatalf("second: %+v, %v", res, err)
	}
	if res, err := hook.Commit(cmd, events, count); res.Status != roomoutbox.Committed || err != nil || !ran {
		t.Fatalf("third: %+v, %v", res, err)
	}
}
