package outboxsql

import (
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWakeSendsOneDatagramToTheRelaysSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wake.sock")
	relay, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	w, err := New(Options{NodeID: "n", WakeSocket: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Wake(); err != nil {
		t.Fatalf("Wake: %v", err)
	}
	buf := make([]byte, 16)
	if err := relay.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	n, err := relay.Read(buf)
	if err != nil || n != 1 || buf[0] != 'w' {
		t.Fatalf("the relay's socket read %q, %v; want one byte 'w'", buf[:n], err)
	}
}

// A full socket (a relay that does not read) costs the sender nothing: the send is refused at
// once, never waited for.
func TestWakeNeverBlocksOnAFullSocket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wake.sock")
	relay, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer relay.Close()
	w, err := New(Options{NodeID: "n", WakeSocket: path})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		var err error
		for i := 0; i < 100000 && err == nil; i++ {
			err = w.Wake()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("100000 datagrams to a socket nobody reads were all accepted; want a refusal once its queue is full")
		}
		t.Logf("full socket: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("Wake blocked on a full socket")
	}
}

func TestWakeWithoutARelayOrSocketIsAnErrorOnly(t *testing.T) {
	w, err := New(Options{NodeID: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Wake(); err == nil || !strings.Contains(err.Error(), "no wake socket configured") {
		t.Fatalf("Wake without a socket: %v", err)
	}
	w, err = New(Options{NodeID: "n", WakeSocket: filepath.Join(t.TempDir(), "absent.sock")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Wake(); err == nil {
		t.Fatal("Wake to a path nobody bound: no error")
	}
}

func TestNewRefusesBadOptionsNamingTheField(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{WakeSocket: "relay.sock"}, `Options.WakeSocket: wake socket path must be absolute: "relay.sock"`},
		{Options{WakeSocket: "/" + strings.Repeat("s", 107)}, "Options.WakeSocket: wake socket path is 108 bytes; a unix socket path holds at most 107"},
		{Options{WakeSocket: "/a\x00b"}, "Options.WakeSocket: wake socket path holds a NUL byte"},
		{Options{MaxBodyBytes: -1}, "Options.MaxBodyBytes: must be at least 0, got -1"},
		{Options{MsgPriority: "Urgent"}, `Options.MsgPriority: must be High, Normal or Low, got "Urgent"`},
		{Options{PriorityByType: map[string]Priority{"RoomGiftSent": "high"}}, `Options.PriorityByType["RoomGiftSent"]: must be High, Normal or Low, got "high"`},
	} {
		_, err := New(c.o)
		e, ok := err.(*Error)
		if !ok || e.Code != CodeInvalidArgument || e.Message != c.want {
			t.Errorf("New(%+v): %v, want %q", c.o, err, c.want)
		}
	}
	w, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := w.Options()
	if o.NodeID == "" || o.MaxBodyBytes != DefaultMaxBodyBytes || o.MsgPriority != High ||
		strings.Join(o.SkipEventTypes, ",") != "RoomCreated,RoomHeatChanged,RoomRankChanged" {
		t.Fatalf("defaults %+v", o)
	}
	w, err = New(Options{SkipEventTypes: []string{}})
	if err != nil || len(w.Options().SkipEventTypes) != 0 || !w.opts.sends("RoomCreated") {
		t.Fatalf("an empty SkipEventTypes must send every type: %+v, %v", w.Options(), err)
	}
}
