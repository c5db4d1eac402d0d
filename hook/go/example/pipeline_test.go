package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// open gives a hook on the harness's fake IM that answers OK (up) or errors (down); see
// hook/go/env_test.go for the variables.
func open(t *testing.T, up bool) *roomoutbox.Hook {
	t.Helper()
	name := "ROOM_OUTBOX_GO_TEST_DOWN_CONFIG"
	var opts []roomoutbox.Option
	if up {
		name = "ROOM_OUTBOX_GO_TEST_UP_CONFIG"
		key, err := os.ReadFile(os.Getenv("ROOM_OUTBOX_GO_TEST_SECRET_FILE"))
		if err != nil {
			t.Skipf("no test database configured (the secret key: %v): run hook/go/run-go-test.sh", err)
		}
		opts = append(opts, roomoutbox.WithSecret("tencent_im.secret_key", strings.TrimSpace(string(key))))
	}
	config := os.Getenv(name)
	if config == "" {
		t.Skipf("no test database configured (%s is not set): run hook/go/run-go-test.sh BUILD_DIR "+
			"under scripts/run-tests.sh, or `scripts/run-tests.sh build -R GoPackage`", name)
	}
	hook, err := roomoutbox.Open(config, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hook.Close() })
	return hook
}

func snapshotSeq(t *testing.T, room string) string {
	t.Helper()
	out, err := exec.Command("mariadb", "--no-defaults", "--socket="+os.Getenv("ROOM_OUTBOX_TEST_MYSQL_SOCKET"),
		"-uroot", "-N", "-B", os.Getenv("ROOM_OUTBOX_GO_TEST_DATABASE"),
		"-e", "SELECT room_seq FROM room_snapshot WHERE room_id = '"+room+"'").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestPipelineWithIMUpPublishesAndReplacesTheState(t *testing.T) {
	p := &Pipeline{Cell: NewRoomCell(), Hook: open(t, true)}
	for _, c := range []RoomCommand{
		{CommandID: "ex-up-1", RoomID: "ex-up", Type: "JoinRoom", UserID: "alice"},
		{CommandID: "ex-up-2", RoomID: "ex-up", Type: "SendGift", UserID: "alice", Gift: "rose"},
	} {
		res, err := p.Handle(c)
		if err != nil || res.Status != roomoutbox.Committed || res.Events[0].State != roomoutbox.Published {
			t.Fatalf("%s: %+v, %v", c.CommandID, res, err)
		}
		t.Logf("%s: %s, %s %s", c.CommandID, res.Status, res.Events[0].EventID, res.Events[0].State)
	}
	if room := p.Cell.Room("ex-up"); room.Seq != 2 || room.Heat != 10 || snapshotSeq(t, "ex-up") != "2" {
		t.Fatalf("state %+v, snapshot seq %s; want seq 2, heat 10 in memory and in the snapshot", room, snapshotSeq(t, "ex-up"))
	}
}

func TestPipelineWithIMDownStillCommitsAndLeavesEventsToTheRelay(t *testing.T) {
	p := &Pipeline{Cell: NewRoomCell(), Hook: open(t, false)}
	res, err := p.Handle(RoomCommand{CommandID: "ex-down-1", RoomID: "ex-down", Type: "JoinRoom", UserID: "bob"})
	if err != nil || res.Status != roomoutbox.Committed || res.Events[0].State != roomoutbox.Pending {
		t.Fatalf("%+v, %v; want committed with the event pending", res, err)
	}
	if p.Cell.Room("ex-down").Seq != 1 || snapshotSeq(t, "ex-down") != "1" {
		t.Fatal("the command succeeded but the room state was not replaced")
	}
	t.Logf("ex-down-1: %s, %s %s (%s)", res.Status, res.Events[0].EventID, res.Events[0].State, res.Events[0].Error)
}

func TestPipelineRefusesACommandTheRoomCellRejects(t *testing.T) {
	p := &Pipeline{Cell: NewRoomCell(), Hook: open(t, true)}
	_, err := p.Handle(RoomCommand{CommandID: "ex-bad-1", RoomID: "ex-bad", Type: "SendGift", UserID: "eve"})
	if err == nil || snapshotSeq(t, "ex-bad") != "" {
		t.Fatalf("a gift from a non-member: %v; want an error and nothing written", err)
	}
}
