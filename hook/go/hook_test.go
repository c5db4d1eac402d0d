package roomoutbox_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

func openUp(t *testing.T, env testEnv, opts ...roomoutbox.Option) *roomoutbox.Hook {
	t.Helper()
	// The up config names no secret key file: the key comes from memory.
	opts = append([]roomoutbox.Option{roomoutbox.WithSecret("tencent_im.secret_key", env.SecretKey)}, opts...)
	hook, err := roomoutbox.Open(env.UpConfig, opts...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = hook.Close() })
	return hook
}

func giftCommand(id string) (roomoutbox.Command, []roomoutbox.Event) {
	room := "go-room-" + id
	cmd := roomoutbox.Command{CommandID: id, RoomID: room, CommandType: "SendGift",
		RequestID: "req-" + id, RoomSeq: 7, Payload: `{"user_id":"u1","gift":"rose"}`}
	events := []roomoutbox.Event{
		{EventID: id + "-gift", EventType: "RoomGiftSent", RoomSeq: 7, Payload: `{"gift":"rose"}`},
		{EventID: id + "-heat", EventType: "RoomHeatChanged", RoomSeq: 7, Payload: `{"heat":3}`},
	}
	return cmd, events
}

func TestOpenRefusesABadSettingNamingTheKey(t *testing.T) {
	env := environment(t)
	_, err := roomoutbox.Open(env.UpConfig, roomoutbox.WithSetting("mysql.port", "0"))
	var e *roomoutbox.Error
	if !errors.As(err, &e) || !errors.Is(err, roomoutbox.ErrInvalidArgument) {
		t.Fatalf("Open with mysql.port 0: %v, want an *Error with CodeInvalidArgument", err)
	}
	if !strings.Contains(e.Message, "mysql.port: must be 1..65535, got 0") || e.Retryable {
		t.Fatalf("message %q (retryable %v) does not name mysql.port and its rule", e.Message, e.Retryable)
	}
	t.Logf("bad option: %v", err)
}

func TestPackMaxEventsIsSetByItsKeyAndChecked(t *testing.T) {
	env := environment(t)
	_, err := roomoutbox.Open(env.UpConfig, roomoutbox.WithSetting("tencent_im.pack_max_events", "101"))
	var e *roomoutbox.Error
	if !errors.As(err, &e) || !errors.Is(err, roomoutbox.ErrInvalidArgument) ||
		!strings.Contains(e.Message, "tencent_im.pack_max_events: must be 1..100, got 101") {
		t.Fatalf("Open with pack_max_events 101: %v, want CodeInvalidArgument naming the key", err)
	}
	hook := openUp(t, env, roomoutbox.WithSetting("tencent_im.pack_max_events", "3"))
	cmd := roomoutbox.Command{CommandID: "go-pack", RoomID: "go-room-pack", CommandType: "SendGift",
		RequestID: "req-go-pack", RoomSeq: 1, Payload: "{}"}
	var events []roomoutbox.Event
	for i := 0; i < 4; i++ {
		events = append(events, roomoutbox.Event{EventID: fmt.Sprintf("go-pack-%d", i),
			EventType: "RoomGiftSent", RoomSeq: 1, Payload: `{"gift":"rose"}`})
	}
	res, err := hook.Commit(cmd, events, nil)
	if err != nil || res.Status != roomoutbox.Committed || len(res.Events) != 4 {
		t.Fatalf("Commit: %+v, %v", res, err)
	}
	for _, ev := range res.Events {
		if ev.State != roomoutbox.Published {
			t.Fatalf("events %+v, want all published (two packs: 3 + 1)", res.Events)
		}
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_outbox WHERE command_id = 'go-pack' AND status = 'published'"); n != 4 {
		t.Fatalf("%d published rows, want 4", n)
	}
}

func TestOpenReportsAMissingFileAndAnUnreachableDatabase(t *testing.T) {
	env := environment(t)
	_, err := roomoutbox.Open("/nonexistent/relay.toml")
	if !errors.Is(err, roomoutbox.ErrNotFound) || !strings.Contains(err.Error(), "/nonexistent/relay.toml") {
		t.Fatalf("Open of a missing file: %v", err)
	}
	_, err = roomoutbox.Open(env.UpConfig, roomoutbox.WithSecret("tencent_im.secret_key", env.SecretKey),
		roomoutbox.WithSetting("mysql.socket", "/nonexistent/mysqld.sock"))
	var e *roomoutbox.Error
	if !errors.As(err, &e) || !e.Retryable || !strings.Contains(e.Message, "/nonexistent/mysqld.sock") {
		t.Fatalf("Open on a socket with no server: %v", err)
	}
	t.Logf("unreachable database: %v", err)
}

func TestConfigurationWarningsReachTheLoggerOnceAPool(t *testing.T) {
	env := environment(t)
	password := filepath.Join(t.TempDir(), "mysql-password")
	// Root over the test server's socket ignores the password; the file's mode is what counts.
	if err := os.WriteFile(password, []byte("unused-by-root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(password, 0o640); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var warnings []string
	logger := func(level roomoutbox.Level, line string) {
		mu.Lock()
		defer mu.Unlock()
		if level == roomoutbox.LevelWarn && strings.HasPrefix(line, "configuration warning: ") {
			warnings = append(warnings, line)
		}
	}
	openUp(t, env, roomoutbox.WithSetting("mysql.password_file", password),
		roomoutbox.WithPoolSize(3), roomoutbox.WithLogger(logger))
	mu.Lock()
	defer mu.Unlock()
	want := "mysql.password_file: \"" + password + "\" is readable by its group or other users (mode 640)"
	if len(warnings) != 1 || !strings.Contains(warnings[0], want) {
		t.Fatalf("warnings %q, want exactly one containing %q", warnings, want)
	}
}

func TestCommitWithIMUpPublishesAndWritesTheSnapshot(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-up")
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		return tx.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES (?, ?, ?, ?)",
			cmd.RoomID, cmd.RoomSeq, `{"heat":3}`, int64(1))
	})
	if err != nil || res.Status != roomoutbox.Committed || len(res.Events) != 2 {
		t.Fatalf("Commit: %+v, %v", res, err)
	}
	if res.Events[0].State != roomoutbox.Published || res.Events[1].State != roomoutbox.Skipped ||
		res.Events[0].EventID != "go-up-gift" {
		t.Fatalf("events %+v, want go-up-gift published and go-up-heat skipped", res.Events)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_outbox WHERE command_id = 'go-up' AND status = 'published'"); n != 2 {
		t.Fatalf("%d published rows, want 2", n)
	}
	if n := env.scalar(t, "SELECT room_seq FROM room_snapshot WHERE room_id = 'go-room-go-up'"); n != 7 {
		t.Fatalf("snapshot room_seq %d, want 7", n)
	}
	t.Logf("IM up: %s %s, %s %s", res.Events[0].EventID, res.Events[0].State, res.Events[1].EventID, res.Events[1].State)
}

func TestCommitOfARepeatedCommandIDIsADuplicate(t *testing.T) {
	env := environment(t)
	var lines []string
	hook := openUp(t, env, roomoutbox.WithLogger(func(level roomoutbox.Level, line string) {
		lines = append(lines, level.String()+": "+line)
	}))
	cmd, events := giftCommand("go-dup")
	if res, err := hook.Commit(cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("first Commit: %+v, %v", res, err)
	}
	res, err := hook.Commit(cmd, events, nil)
	if err != nil || res.Status != roomoutbox.Duplicate || len(res.Events) != 0 {
		t.Fatalf("second Commit: %+v, %v; want Duplicate and no error", res, err)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_outbox WHERE command_id = 'go-dup'"); n != 2 {
		t.Fatalf("%d outbox rows, want the first commit's 2", n)
	}
	if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "duplicate command ignored") {
		t.Fatalf("log lines %q: want the duplicate logged", lines)
	}
	t.Logf("duplicate: %s; log: %s", res.Status, lines[len(lines)-1])
}

var errSnapshotRefused = errors.New("snapshot refused by the room")

func TestCommitWithAFailingStatementRollsBackEverything(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-fail")
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		return tx.Exec("UPDATE no_such_table SET x = ?", 1)
	})
	var e *roomoutbox.Error
	if res.Status != roomoutbox.Failed || !errors.As(err, &e) || !strings.Contains(e.Message, "no_such_table") {
		t.Fatalf("Commit with a failing statement: %+v, %v", res, err)
	}
	t.Logf("failing statement: %v", err)
	// The callback's own error: wrapped, so errors.Is finds it.
	res, err = hook.Commit(cmd, events, func(tx roomoutbox.Tx) error { return errSnapshotRefused })
	if res.Status != roomoutbox.Failed || !errors.Is(err, errSnapshotRefused) || !errors.Is(err, roomoutbox.ErrCancelled) {
		t.Fatalf("Commit with a refusing callback: %+v, %v", res, err)
	}
	t.Logf("refusing callback: %v", err)
	for _, table := range []string{"room_command_log", "room_outbox"} {
		if n := env.scalar(t, "SELECT COUNT(*) FROM "+table+" WHERE command_id = 'go-fail'"); n != 0 {
			t.Fatalf("%d rows in %s after a rollback", n, table)
		}
	}
}

func TestTheCallbackCannotBreakTheTransaction(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-outer")
	inner, innerEvents := giftCommand("go-inner")
	var nestedErr, commitErr error
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		// A Commit on the same Hook from inside its callback: refused at once, no deadlock.
		_, nestedErr = hook.Commit(inner, innerEvents, nil)
		commitErr = tx.Exec("COMMIT")
		return nil
	})
	var e *roomoutbox.Error
	if !errors.As(nestedErr, &e) || e.Code != roomoutbox.CodeInvalidArgument ||
		!strings.Contains(e.Message, "inside a statements callback") {
		t.Fatalf("nested Commit: %v", nestedErr)
	}
	if !errors.Is(commitErr, roomoutbox.ErrInvalidArgument) ||
		!strings.Contains(commitErr.Error(), "caller statement refused") {
		t.Fatalf("COMMIT in the callback: %v", commitErr)
	}
	// The refused COMMIT fails the outer commit as a whole, whatever the callback returned.
	if res.Status != roomoutbox.Failed || err == nil {
		t.Fatalf("outer Commit: %+v, %v", res, err)
	}
	for _, id := range []string{"go-outer", "go-inner"} {
		if n := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = '"+id+"'"); n != 0 {
			t.Fatalf("%s: %d command log rows", id, n)
		}
	}
	// Afterwards both commit as usual.
	if res, err := hook.Commit(cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("%s after the refusals: %+v, %v", cmd.CommandID, res, err)
	}
	if res, err := hook.Commit(inner, innerEvents, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("%s after the refusals: %+v, %v", inner.CommandID, res, err)
	}
}

// Goroutines the callback starts share its Tx: their statements run one at a time on the
// commit's connection (unserialised, they interleave on it and break it), all in the commit's
// transaction; once the callback returned the Tx refuses them.
func TestTxIsSafeForGoroutinesOfTheCallback(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-conc")
	const goroutines, each = 8, 25
	var kept roomoutbox.Tx
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		kept = tx
		errs := make(chan error, goroutines*each)
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func(g int) {
				defer wg.Done()
				for i := 0; i < each; i++ {
					errs <- tx.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES (?, ?, ?, ?)",
						fmt.Sprintf("go-conc-%d-%d", g, i), int64(i), strings.Repeat("x", 200), int64(g))
				}
			}(g)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			if e != nil {
				return e
			}
		}
		return nil
	})
	if err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("Commit with %d goroutines on the Tx: %+v, %v", goroutines, res, err)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_snapshot WHERE room_id LIKE 'go-conc-%'"); n != goroutines*each {
		t.Fatalf("%d snapshot rows, want %d", n, goroutines*each)
	}
	late := kept.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES ('go-conc-late', 0, '', 0)")
	var e *roomoutbox.Error
	if !errors.As(late, &e) || e.Code != roomoutbox.CodeInvalidArgument {
		t.Fatalf("Exec after the callback returned: %v, want CodeInvalidArgument", late)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_snapshot WHERE room_id = 'go-conc-late'"); n != 0 {
		t.Fatalf("an Exec after the callback wrote a row")
	}
}

func TestCommitWithIMDownCommitsAndLeavesTheEventPending(t *testing.T) {
	env := environment(t)
	hook, err := roomoutbox.Open(env.DownConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer hook.Close()
	cmd, events := giftCommand("go-down")
	res, err := hook.Commit(cmd, events, nil)
	if err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("Commit with IM down: %+v, %v; the command must still commit", res, err)
	}
	if res.Events[0].State != roomoutbox.Pending || res.Events[0].Error == "" {
		t.Fatalf("event %+v, want pending with a reason", res.Events[0])
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_outbox WHERE event_id = 'go-down-gift' AND status = 'pending' AND retry_count = 0"); n != 1 {
		t.Fatalf("go-down-gift is not pending with retry_count 0")
	}
	t.Logf("IM down: %s %s (%s)", res.Events[0].EventID, res.Events[0].State, res.Events[0].Error)
}

func TestAPanicInTheCallbackRollsBackAndIsRaisedAgain(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-panic")
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recovered %v, want the callback's panic", p)
			}
		}()
		_, _ = hook.Commit(cmd, events, func(tx roomoutbox.Tx) error { panic("boom") })
	}()
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = 'go-panic'"); n != 0 {
		t.Fatalf("a panicking callback left %d command log rows", n)
	}
	// The hook is still usable.
	if res, err := hook.Commit(cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("Commit after a panic: %+v, %v", res, err)
	}
}

func TestOneHookSharedByGoroutinesSerialisesThem(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 5; i++ {
				cmd, events := giftCommand(fmt.Sprintf("go-shared-%d-%d", g, i))
				if res, err := hook.Commit(cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
					errs <- fmt.Errorf("%s: %+v, %v", cmd.CommandID, res, err)
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id LIKE 'go-shared-%'"); n != 20 {
		t.Fatalf("%d commands committed, want 20", n)
	}
}

func TestCloseIsIdempotentAndAClosedHookRefuses(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	if hook.Close() != nil || hook.Close() != nil {
		t.Fatal("Close returned an error")
	}
	cmd, events := giftCommand("go-closed")
	if _, err := hook.Commit(cmd, events, nil); !errors.Is(err, roomoutbox.ErrClosed) {
		t.Fatalf("Commit after Close: %v, want ErrClosed", err)
	}
}
