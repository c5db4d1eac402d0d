// Package roomoutboxtest is a fake of the roomoutbox hook for a room service's unit tests, in
// the spirit of net/http/httptest: a Hook that implements roomoutbox.Committer in memory (no
// database, no Tencent IM), runs the statements callback against a Tx that records every
// statement, and records every Commit for the test to inspect.
//
//	hook := roomoutboxtest.NewHook()
//	svc := NewRoomService(hook) // the service depends on roomoutbox.Committer
//	svc.SendGift("room-7", "u1", "rose")
//	c := hook.Commits()[0]      // the command, its events, the statements run, the result
//
// It keeps the hook's promises that a service relies on: a CommandID committed before is a
// Duplicate (nothing recorded as committed, the callback not run); a callback error or a
// failed statement rolls the command back (Failed, an *roomoutbox.Error that wraps the
// callback's error, nothing of it committed); a done ctx stops the commit before COMMIT; each
// event of a committed command is Published, or Skipped when its type is in SkipEventTypes, or
// Pending while IMDown is set. It does not check SQL or the command's fields (the real Hook's
// checks at commit); the package's own tests against a database do that.
package roomoutboxtest

import (
	"context"
	"errors"
	"sync"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// DefaultSkipEventTypes are [tencent_im] skip_event_types' default: events never sent to IM.
var DefaultSkipEventTypes = []string{"RoomCreated", "RoomHeatChanged", "RoomRankChanged"}

// Hook is the fake. Its fields may be set before use and changed between Commits (under no
// concurrent Commit); its methods are safe for concurrent use.
type Hook struct {
	// SkipEventTypes: events of these types are Skipped (NewHook: DefaultSkipEventTypes).
	SkipEventTypes []string
	// IMDown: the events of committed commands are Pending (left for outbox-relay) with an
	// Error, as when IM fails; false: Published.
	IMDown bool
	// Exec, when set, answers each statement of the callbacks (the rows it matched, or an error
	// that fails the statement and rolls the command back); nil: every statement matches 1 row.
	Exec func(query string, args []interface{}) (int64, error)

	mu        sync.Mutex
	commits   []Commit
	committed map[string]bool
	failNext  []failure
}

type failure struct {
	status roomoutbox.CommitStatus
	err    *roomoutbox.Error
}

// Commit is one recorded Commit call.
type Commit struct {
	Command    roomoutbox.Command
	Events     []roomoutbox.Event
	Statements []Statement // what the callback ran, in order (of its last run)
	Result     roomoutbox.Result
	Err        error
}

// Statement is one Exec or ExecAffected of a callback.
type Statement struct {
	Query string
	Args  []interface{}
}

// NewHook is a fake with the default skip types, IM up and every statement matching 1 row.
func NewHook() *Hook {
	return &Hook{SkipEventTypes: append([]string(nil), DefaultSkipEventTypes...), committed: map[string]bool{}}
}

var _ roomoutbox.Committer = (*Hook)(nil)

// FailNext makes the next Commit end with status (roomoutbox.Failed or roomoutbox.Unknown) and
// err (e.g. roomoutbox.NewError(roomoutbox.CodeUnavailable, "database down", nil)), without
// running the callback or committing anything. Calls queue up, one per Commit.
func (h *Hook) FailNext(status roomoutbox.CommitStatus, err *roomoutbox.Error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.failNext = append(h.failNext, failure{status, err})
}

// Commits returns the recorded Commits, in call order.
func (h *Hook) Commits() []Commit {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Commit(nil), h.commits...)
}

// Committed returns the commands committed so far (not Duplicate, Failed or Unknown), in order.
func (h *Hook) Committed() []roomoutbox.Command {
	var out []roomoutbox.Command
	for _, c := range h.Commits() {
		if c.Result.Status == roomoutbox.Committed {
			out = append(out, c.Command)
		}
	}
	return out
}

// Commit is CommitContext with context.Background().
func (h *Hook) Commit(cmd roomoutbox.Command, events []roomoutbox.Event,
	statements func(tx roomoutbox.Tx) error) (roomoutbox.Result, error) {
	return h.CommitContext(context.Background(), cmd, events, statements)
}

// CommitContext commits in memory, one command at a time (as one pool member would), and
// records the call.
func (h *Hook) CommitContext(ctx context.Context, cmd roomoutbox.Command, events []roomoutbox.Event,
	statements func(tx roomoutbox.Tx) error) (roomoutbox.Result, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rec := Commit{Command: cmd, Events: append([]roomoutbox.Event(nil), events...)}
	rec.Result, rec.Err = h.commit(ctx, cmd, events, statements, &rec.Statements)
	h.commits = append(h.commits, rec)
	return rec.Result, rec.Err
}

func (h *Hook) commit(ctx context.Context, cmd roomoutbox.Command, events []roomoutbox.Event,
	statements func(tx roomoutbox.Tx) error, ran *[]Statement) (roomoutbox.Result, error) {
	failed := roomoutbox.Result{Status: roomoutbox.Failed}
	if len(h.failNext) > 0 {
		f := h.failNext[0]
		h.failNext = h.failNext[1:]
		return roomoutbox.Result{Status: f.status}, f.err
	}
	if err := stopped(ctx, "before the commit began"); err != nil {
		return failed, err
	}
	if h.committed[cmd.CommandID] {
		return roomoutbox.Result{Status: roomoutbox.Duplicate}, nil
	}
	if statements != nil {
		tx := &Tx{ctx: ctx, exec: h.Exec, ran: ran}
		if err := rolledBack(statements(tx), tx.end()); err != nil {
			return failed, err
		}
	}
	if err := stopped(ctx, "before COMMIT"); err != nil {
		return failed, err
	}
	h.committed[cmd.CommandID] = true
	return h.delivered(events), nil
}

// rolledBack is the hook's error for a callback that returned err after its statements, of which
// the first failed one (if any) failed with stmt: the statement's error wrapping the callback's,
// else CodeCancelled wrapping the callback's; nil when neither failed.
func rolledBack(err error, stmt *roomoutbox.Error) error {
	switch {
	case stmt != nil:
		return roomoutbox.NewError(stmt.Code, stmt.Message, err)
	case err != nil:
		return roomoutbox.NewError(roomoutbox.CodeCancelled, "caller statements returned an error; rolled back", err)
	}
	return nil
}

// delivered is a committed command's Result: each event Published, Skipped or Pending.
func (h *Hook) delivered(events []roomoutbox.Event) roomoutbox.Result {
	res := roomoutbox.Result{Status: roomoutbox.Committed}
	for _, e := range events {
		d := roomoutbox.EventDelivery{EventID: e.EventID, State: roomoutbox.Published}
		switch {
		case h.skips(e.EventType):
			d.State = roomoutbox.Skipped
		case h.IMDown:
			d.State, d.Error = roomoutbox.Pending, "fake IM down (roomoutboxtest.Hook.IMDown)"
		}
		res.Events = append(res.Events, d)
	}
	return res
}

func (h *Hook) skips(eventType string) bool {
	for _, t := range h.SkipEventTypes {
		if t == eventType {
			return true
		}
	}
	return false
}

// stopped is the hook's ctx check: nil while ctx lasts, else the *Error wrapping ctx.Err().
func stopped(ctx context.Context, when string) error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	code := roomoutbox.CodeCancelled
	if errors.Is(err, context.DeadlineExceeded) {
		code = roomoutbox.CodeDeadlineExceeded
	}
	return roomoutbox.NewError(code, "commit stopped "+when+", nothing committed", err)
}
