package roomoutbox_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// patience bounds a wait for an event that must come; reaching it fails the test.
const patience = 60 * time.Second

// waitingOnTheServer counts the statements of the test's database that wait on the server: a
// transaction the server shows as LOCK WAIT, or a statement still running that starts with
// `prefix` (MariaDB does not always show a row lock wait as a LOCK WAIT transaction; a statement
// that cannot finish while another transaction holds its row shows as running). -1 when the
// server cannot be asked.
func waitingOnTheServer(env testEnv, prefix string) int64 {
	out, err := exec.Command("mariadb", "--no-defaults", "--socket="+env.Socket, "-uroot", "-N", "-B",
		env.Database, "-e", "SELECT (SELECT COUNT(*) FROM information_schema.INNODB_TRX t JOIN "+
			"information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id "+
			"WHERE t.trx_state = 'LOCK WAIT' AND p.DB = DATABASE()) + (SELECT COUNT(*) FROM "+
			"information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE '"+prefix+"%')").Output()
	if err != nil {
		return -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func insertSnapshot(tx roomoutbox.Tx, room string, seq int64) error {
	return tx.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES (?, ?, ?, ?)",
		room, seq, `{}`, int64(1))
}

func TestExecAffectedCountsFoundRowsAndALostRaceRollsBack(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	seed, seedEvents := giftCommand("go-aff-seed")
	if _, err := hook.Commit(seed, seedEvents, func(tx roomoutbox.Tx) error {
		return insertSnapshot(tx, "go-aff-room", 7)
	}); err != nil {
		t.Fatal(err)
	}
	advance := "UPDATE room_snapshot SET room_seq = ? WHERE room_id = ? AND room_seq = ?"
	errLostRace := errors.New("lost the race")
	run := func(id string, from int64) (int64, roomoutbox.Result, error) {
		cmd, events := giftCommand(id)
		var n int64 = -1
		res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
			var err error
			if n, err = tx.ExecAffected(advance, from+1, "go-aff-room", from); err != nil {
				return err
			}
			if n != 1 {
				return errLostRace
			}
			return nil
		})
		return n, res, err
	}
	// At 7, expected 7: one row found, committed.
	if n, res, err := run("go-aff-won", 7); err != nil || n != 1 || res.Status != roomoutbox.Committed {
		t.Fatalf("the current version: %d rows, %+v, %v; want 1 and Committed", n, res, err)
	}
	// At 8 now, expected 7 again: no row found, the command rolls back.
	n, res, err := run("go-aff-lost", 7)
	if n != 0 || res.Status != roomoutbox.Failed || !errors.Is(err, errLostRace) {
		t.Fatalf("a stale version: %d rows, %+v, %v; want 0 and Failed wrapping errLostRace", n, res, err)
	}
	if c := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = 'go-aff-lost'"); c != 0 {
		t.Fatalf("the lost command left %d command log rows", c)
	}
	if seq := env.scalar(t, "SELECT room_seq FROM room_snapshot WHERE room_id = 'go-aff-room'"); seq != 8 {
		t.Fatalf("room_seq %d, want 8", seq)
	}
	// Found rows, not changed rows: setting the values the row already has still counts 1.
	cmd, events := giftCommand("go-aff-same")
	if _, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		if n, err := tx.ExecAffected(advance, int64(8), "go-aff-room", int64(8)); err != nil || n != 1 {
			return fmt.Errorf("an UPDATE to the same values: %d rows, %v; want 1", n, err)
		}
		if n, err := tx.ExecAffected("SELECT room_id FROM room_snapshot WHERE room_id = ?", "go-aff-room"); err != nil || n != 1 {
			return fmt.Errorf("a SELECT of one row: %d rows, %v; want 1", n, err)
		}
		n, err := tx.ExecAffected("UPDATE no_such_table SET x = ?", 1)
		if n != 0 || !strings.Contains(fmt.Sprint(err), "no_such_table") {
			return fmt.Errorf("a failing statement: %d rows, %v; want 0 and its error", n, err)
		}
		return nil
	}); err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Fatalf("Commit: %v; want the failed statement's error and every check above passing", err)
	}
}

// n Commits of a pool of n are inside their callbacks at once: each waits, with its transaction
// open, until all n have arrived. Serialised commits never all arrive.
func TestAPoolRunsCommitsConcurrently(t *testing.T) {
	env := environment(t)
	const n = 4
	hook := openUp(t, env, roomoutbox.WithPoolSize(n))
	arrived := make(chan string, n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for g := 0; g < n; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			cmd, events := giftCommand(fmt.Sprintf("go-pool-%d", g))
			res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
				if err := insertSnapshot(tx, cmd.RoomID, cmd.RoomSeq); err != nil {
					return err
				}
				arrived <- cmd.CommandID
				select {
				case <-release:
					return nil
				case <-time.After(patience):
					return errors.New("the other commits never arrived")
				}
			})
			if err != nil || res.Status != roomoutbox.Committed {
				errs <- fmt.Errorf("%s: %+v, %v", cmd.CommandID, res, err)
			}
		}(g)
	}
	for i := 0; i < n; i++ {
		select {
		case id := <-arrived:
			t.Logf("inside its transaction: %s (%d of %d)", id, i+1, n)
		case <-time.After(patience):
			close(release)
			wg.Wait()
			t.Fatalf("only %d of %d commits were inside their transactions at once", i, n)
		}
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id LIKE 'go-pool-%'"); c != n {
		t.Fatalf("%d commands committed, want %d", c, n)
	}
}

// holdMember starts a Commit that keeps a member of the pool, inside its callback, until release
// is closed; it returns once the callback is running.
func holdMember(t *testing.T, hook *roomoutbox.Hook, id string, release <-chan struct{},
	statements func(tx roomoutbox.Tx) error) <-chan error {
	t.Helper()
	inside := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		cmd, events := giftCommand(id)
		_, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
			if statements != nil {
				if err := statements(tx); err != nil {
					return err
				}
			}
			close(inside)
			<-release
			return nil
		})
		done <- err
	}()
	select {
	case <-inside:
	case err := <-done:
		t.Fatalf("the holding commit %s ended early: %v", id, err)
	}
	return done
}

func TestAFullPoolWaitsWhileTheContextLasts(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env, roomoutbox.WithPoolSize(1))
	release := make(chan struct{})
	held := holdMember(t, hook, "go-ctx-holder", release, nil)
	// The only member is busy until this Commit returns: it can only end by its deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	cmd, events := giftCommand("go-ctx-waiter")
	res, err := hook.CommitContext(ctx, cmd, events, nil)
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the holding commit: %v", err)
	}
	var e *roomoutbox.Error
	if res.Status != roomoutbox.Failed || !errors.Is(err, context.DeadlineExceeded) ||
		!errors.As(err, &e) || e.Code != roomoutbox.CodeDeadlineExceeded || !e.Retryable {
		t.Fatalf("CommitContext on a full pool: %+v, %v; want Failed, DeadlineExceeded", res, err)
	}
	if c := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = 'go-ctx-waiter'"); c != 0 {
		t.Fatalf("the waiter left %d command log rows", c)
	}
	t.Logf("full pool: %v", err)
}

func TestACancelledContextRollsBackBeforeCommit(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env, roomoutbox.WithPoolSize(2))
	cases := []struct {
		id   string
		stop func(cancel context.CancelFunc, tx roomoutbox.Tx) error
	}{
		// Cancelled before the call: nothing runs.
		{"go-cancel-before", nil},
		// Cancelled between statements: the next Exec refuses; the callback ignores it.
		{"go-cancel-between", func(cancel context.CancelFunc, tx roomoutbox.Tx) error {
			if err := insertSnapshot(tx, "go-cancel-between", 1); err != nil {
				return err
			}
			cancel()
			if err := tx.Exec("UPDATE room_snapshot SET room_seq = 2 WHERE room_id = ?", "go-cancel-between"); !errors.Is(err, context.Canceled) {
				return fmt.Errorf("Exec after cancel: %v, want context.Canceled", err)
			}
			return nil
		}},
		// Cancelled after the last statement: the check before COMMIT rolls back.
		{"go-cancel-last", func(cancel context.CancelFunc, tx roomoutbox.Tx) error {
			err := insertSnapshot(tx, "go-cancel-last", 1)
			cancel()
			return err
		}},
	}
	for _, c := range cases {
		ctx, cancel := context.WithCancel(context.Background())
		ran := false
		var statements func(tx roomoutbox.Tx) error
		if c.stop == nil {
			cancel()
			statements = func(tx roomoutbox.Tx) error { ran = true; return nil }
		} else {
			stop := c.stop
			statements = func(tx roomoutbox.Tx) error { return stop(cancel, tx) }
		}
		cmd, events := giftCommand(c.id)
		res, err := hook.CommitContext(ctx, cmd, events, statements)
		cancel()
		var e *roomoutbox.Error
		if res.Status != roomoutbox.Failed || !errors.Is(err, context.Canceled) ||
			!errors.Is(err, roomoutbox.ErrCancelled) || !errors.As(err, &e) || ran {
			t.Fatalf("%s: %+v, %v (callback ran: %v); want Failed wrapping context.Canceled", c.id, res, err, ran)
		}
		for _, table := range []string{"room_command_log", "room_outbox"} {
			if n := env.scalar(t, "SELECT COUNT(*) FROM "+table+" WHERE command_id = '"+c.id+"'"); n != 0 {
				t.Fatalf("%s: %d rows in %s after a cancelled commit", c.id, n, table)
			}
		}
		if n := env.scalar(t, "SELECT COUNT(*) FROM room_snapshot WHERE room_id = '"+c.id+"'"); n != 0 {
			t.Fatalf("%s: the snapshot row survived a cancelled commit", c.id)
		}
		t.Logf("%s: %v", c.id, err)
	}
	// The hook is still usable afterwards.
	cmd, events := giftCommand("go-cancel-after")
	if res, err := hook.CommitContext(context.Background(), cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("a commit after the cancelled ones: %+v, %v", res, err)
	}
}

// A statement waiting on a row lock when the context ends runs to its end; the commit then rolls
// back instead of sending COMMIT.
func TestAContextEndingDuringAStatementRollsBackAfterIt(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env, roomoutbox.WithPoolSize(2))
	seed, seedEvents := giftCommand("go-midway-seed")
	if _, err := hook.Commit(seed, seedEvents, func(tx roomoutbox.Tx) error {
		return insertSnapshot(tx, "go-midway-room", 1)
	}); err != nil {
		t.Fatal(err)
	}
	lockRow := func(tx roomoutbox.Tx) error {
		return tx.Exec("UPDATE room_snapshot SET state = '{\"by\":\"holder\"}' WHERE room_id = ?", "go-midway-room")
	}
	release := make(chan struct{})
	held := holdMember(t, hook, "go-midway-holder", release, lockRow)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Once the waiter's UPDATE waits on the holder's row lock: cancel, then let the holder commit.
	go func() {
		defer close(release)
		for start := time.Now(); time.Since(start) < patience; time.Sleep(20 * time.Millisecond) {
			if waitingOnTheServer(env, "UPDATE room_snapshot SET room_seq") > 0 {
				cancel()
				return
			}
		}
	}()
	var updateErr error
	var updated int64 = -1
	cmd, events := giftCommand("go-midway-waiter")
	res, err := hook.CommitContext(ctx, cmd, events, func(tx roomoutbox.Tx) error {
		updated, updateErr = tx.ExecAffected("UPDATE room_snapshot SET room_seq = 2 WHERE room_id = ?", "go-midway-room")
		return updateErr
	})
	if err := <-held; err != nil {
		t.Fatalf("the lock holder: %v", err)
	}
	if updateErr != nil || updated != 1 {
		t.Fatalf("the waiting UPDATE: %d rows, %v; want it to finish once the lock was released", updated, updateErr)
	}
	if res.Status != roomoutbox.Failed || !errors.Is(err, context.Canceled) ||
		!strings.Contains(err.Error(), "before COMMIT") {
		t.Fatalf("CommitContext: %+v, %v; want Failed wrapping context.Canceled before COMMIT", res, err)
	}
	if seq := env.scalar(t, "SELECT room_seq FROM room_snapshot WHERE room_id = 'go-midway-room'"); seq != 1 {
		t.Fatalf("room_seq %d: the UPDATE of the cancelled commit was committed", seq)
	}
	t.Logf("cancelled during a statement: %v", err)
}

func TestACommitInsideTheCallbackIsRefusedWithFreeMembers(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env, roomoutbox.WithPoolSize(3))
	cmd, events := giftCommand("go-pool-outer")
	inner, innerEvents := giftCommand("go-pool-inner")
	var nestedErr error
	res, err := hook.Commit(cmd, events, func(tx roomoutbox.Tx) error {
		_, nestedErr = hook.CommitContext(context.Background(), inner, innerEvents, nil)
		return nil
	})
	if err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("outer Commit: %+v, %v", res, err)
	}
	if !errors.Is(nestedErr, roomoutbox.ErrInvalidArgument) || !strings.Contains(nestedErr.Error(), "inside a statements callback") {
		t.Fatalf("nested Commit with free members: %v, want refused", nestedErr)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = 'go-pool-inner'"); n != 0 {
		t.Fatalf("the nested command was committed")
	}
}

func TestWithPoolSizeRefusesZeroAndCloseWaitsForCommits(t *testing.T) {
	env := environment(t)
	if _, err := roomoutbox.Open(env.UpConfig, roomoutbox.WithPoolSize(0)); !errors.Is(err, roomoutbox.ErrInvalidArgument) ||
		!strings.Contains(err.Error(), "WithPoolSize") {
		t.Fatalf("WithPoolSize(0): %v", err)
	}
	hook, err := roomoutbox.Open(env.UpConfig, roomoutbox.WithSecret("tencent_im.secret_key", env.SecretKey),
		roomoutbox.WithPoolSize(2))
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	held := holdMember(t, hook, "go-close-holder", release, nil)
	closed := make(chan struct{})
	go func() {
		_ = hook.Close()
		close(closed)
	}()
	// Close has begun once Commits are refused; it cannot end while the holder runs.
	cmd, events := giftCommand("go-close-late")
	for {
		if _, err := hook.Commit(cmd, events, nil); errors.Is(err, roomoutbox.ErrClosed) {
			break
		}
		cmd.CommandID += "x"
	}
	select {
	case <-closed:
		t.Fatal("Close returned while a Commit was under way")
	default:
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the commit under way when Close began: %v", err)
	}
	<-closed
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_command_log WHERE command_id = 'go-close-holder'"); n != 1 {
		t.Fatalf("the commit under way was not committed")
	}
}
