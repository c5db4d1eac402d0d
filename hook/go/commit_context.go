package roomoutbox

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import (
	"context"
	"errors"
	"runtime"
	"runtime/cgo"
)

// CommitContext commits cmd, its events and the caller's statements in one transaction, then
// makes the sync publish (see the package documentation). statements may be nil; it runs inside
// the transaction on this goroutine and may run twice. The error is nil when the result is
// Committed or Duplicate; for Failed (rolled back) and Unknown (COMMIT's answer was lost: commit
// again with the same CommandID to learn which) it is an *Error, wrapping the statements
// callback's own error when that made the commit fail. A panic of the callback rolls the commit
// back and is raised again from CommitContext.
//
// ctx bounds the commit up to COMMIT: while waiting for a free member of the pool, before the
// statements callback runs, before each Tx.Exec and Tx.ExecAffected, and once the callback has
// returned (just before the outbox rows are inserted and COMMIT is sent), a done ctx rolls the
// command back and CommitContext returns Failed with an *Error (CodeCancelled or
// CodeDeadlineExceeded) that wraps ctx.Err(), so errors.Is(err, context.Canceled) holds. A
// statement already running when ctx ends runs to its end (a lock wait up to the server's
// innodb_lock_wait_timeout, a slow answer up to [mysql] read_timeout); the next check then rolls
// back. Once COMMIT is sent ctx no longer matters: the outcome is what the server answered, and
// the sync publish after it is bounded by [hook] sync_publish_timeout, not by ctx.
func (h *Hook) CommitContext(ctx context.Context, cmd Command, events []Event,
	statements func(tx Tx) error) (Result, error) {
	if h.inStatements.holds() {
		return Result{Status: Failed}, &Error{Code: CodeInvalidArgument, Message: "Commit " +
			"refused: called from inside a statements callback of the same Hook (it would " +
			"commit the outer transaction); command_id=" + cmd.CommandID}
	}
	member, err := h.acquire(ctx)
	if err != nil {
		return Result{Status: Failed}, err
	}
	defer func() { h.members <- member }()
	ccmd, err := newCommand(cmd, events)
	if err != nil {
		return Result{Status: Failed}, err
	}
	defer C.room_outbox_command_destroy(ccmd)
	var handle cgo.Handle
	call := &statementsCall{fn: statements, hook: h, ctx: ctx}
	// A ctx that can end needs the callback for its checks, even without statements.
	if statements != nil || ctx.Done() != nil {
		handle = cgo.NewHandle(call)
		defer handle.Delete()
	}
	var cresult *C.room_outbox_result
	var cerr *C.room_outbox_error
	status := commit(member, ccmd, handle, &cresult, &cerr)
	runtime.KeepAlive(h)
	defer C.room_outbox_result_destroy(cresult)
	if call.panicked != nil {
		if cerr != nil {
			C.room_outbox_error_free(cerr)
		}
		panic(call.panicked)
	}
	res := copyResult(cresult)
	if status != C.ROOM_OUTBOX_OK {
		e := statusError(status, cerr)
		// ctx stopped it: the error that says when, not "caller statements returned cancelled".
		if stop, ok := call.err.(*Error); ok && ctx.Err() != nil && stop.cause == ctx.Err() &&
			stop.Code == e.Code {
			return res, stop
		}
		e.cause = call.err
		return res, e
	}
	return res, nil
}

// acquire takes a free member, waiting for one while ctx lasts and the Hook is open.
func (h *Hook) acquire(ctx context.Context) (*C.room_outbox_hook, error) {
	if err := stoppedBy(ctx, "before the commit began"); err != nil {
		return nil, err
	}
	select {
	case <-h.closed:
		return nil, ErrClosed
	default:
	}
	select {
	case member := <-h.members:
		select {
		case <-h.closed: // Close began meanwhile: it takes the member back
			h.members <- member
			return nil, ErrClosed
		default:
			return member, nil
		}
	case <-h.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, stoppedBy(ctx, "while waiting for a free member of the pool")
	}
}

// stoppedBy is nil while ctx lasts, else the *Error of a commit that ctx stopped (before COMMIT
// was sent), wrapping ctx.Err().
func stoppedBy(ctx context.Context, when string) *Error {
	err := ctx.Err()
	if err == nil {
		return nil
	}
	code := CodeCancelled
	if errors.Is(err, context.DeadlineExceeded) {
		code = CodeDeadlineExceeded
	}
	return &Error{Code: code, Message: "commit stopped " + when + ", nothing committed",
		Retryable: code == CodeDeadlineExceeded, cause: err}
}

// stoppedStatus is the C status the statements callback returns when ctx stopped the commit.
func stoppedStatus(e *Error) C.room_outbox_status {
	return C.room_outbox_status(e.Code)
}

// stopped is Tx's check before each statement: nil while the Commit's ctx lasts.
func (tx *hookTx) stopped() error {
	if tx.ctx == nil {
		return nil
	}
	if e := stoppedBy(tx.ctx, "before a statement of the callback"); e != nil {
		return e
	}
	return nil
}
