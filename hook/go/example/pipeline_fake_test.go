package main

import (
	"errors"
	"strings"
	"testing"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
	"github.com/room-outbox/room-outbox/hook/go/roomoutboxtest"
)

// The pipeline's unit test on the fake hook: no database, no IM. The state is replaced only when
// the command committed; the snapshot statement carries the next state.
func TestPipelineOnTheFakeReplacesTheStateOnlyOnCommit(t *testing.T) {
	hook := roomoutboxtest.NewHook()
	p := &Pipeline{Cell: NewRoomCell(), Hook: hook}
	if _, err := p.Handle(RoomCommand{CommandID: "c1", RoomID: "r", Type: "JoinRoom", UserID: "alice"}); err != nil {
		t.Fatal(err)
	}
	hook.FailNext(roomoutbox.Failed, roomoutbox.NewError(roomoutbox.CodeUnavailable, "database down", nil))
	gift := RoomCommand{CommandID: "c2", RoomID: "r", Type: "SendGift", UserID: "alice", Gift: "rose"}
	if _, err := p.Handle(gift); !errors.Is(err, roomoutbox.ErrUnavailable) {
		t.Fatalf("gift with the database down: %v", err)
	}
	if p.Cell.Room("r").Heat != 0 {
		t.Fatalf("a failed commit changed the room: %+v", p.Cell.Room("r"))
	}
	res, err := p.Handle(gift)
	if err != nil || res.Status != roomoutbox.Committed || p.Cell.Room("r").Heat != 10 || p.Cell.Room("r").Seq != 2 {
		t.Fatalf("gift: %+v, %v, room %+v", res, err, p.Cell.Room("r"))
	}
	last := hook.Commits()[len(hook.Commits())-1]
	if len(last.Events) != 2 || last.Events[0].EventType != "RoomGiftSent" || res.Events[1].State != roomoutbox.Skipped ||
		len(last.Statements) != 1 || !strings.HasPrefix(last.Statements[0].Query, "INSERT INTO room_snapshot") ||
		last.Statements[0].Args[1] != int64(2) {
		t.Fatalf("recorded commit %+v, result %+v", last, res)
	}
	if res, err := p.Handle(gift); err != nil || res.Status != roomoutbox.Duplicate || p.Cell.Room("r").Heat != 10 {
		t.Fatalf("repeated gift: %+v, %v, room %+v", res, err, p.Cell.Room("r"))
	}
}
