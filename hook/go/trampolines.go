package roomoutbox

// The two functions C calls back into Go: the statements callback of a Commit and the log
// callback of a Hook. Each receives a cgo.Handle (never a Go pointer) as its user data. This
// file's preamble holds declarations only, as //export requires.

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import (
	"context"
	"fmt"
	"runtime/cgo"
)

// statementsCall is what a Commit's handle refers to: the caller's function and what became of
// its run.
type statementsCall struct {
	fn       func(tx Tx) error // nil: no statements, only the context's checks
	hook     *Hook             // whose Commit runs the callback
	ctx      context.Context   // the Commit's; checked before and after fn
	err      error             // the callback's own error, wrapped by Commit's error
	panicked interface{}       // a panic of the callback, raised again by Commit once C returned
}

//export roomOutboxStatements
func roomOutboxStatements(ctx *C.room_outbox_tx, handle C.uintptr_t) (status C.room_outbox_status) {
	call := cgo.Handle(handle).Value().(*statementsCall)
	tx := &hookTx{c: ctx, ctx: call.ctx}
	id := goroutineID()
	call.hook.inStatements.enter(id)
	defer func() {
		call.hook.inStatements.leave(id)
		tx.end() // a Tx is valid only during the callback
		// A panic must not unwind through the C++ commit: it becomes a rollback here and is
		// raised again on the Go side.
		if p := recover(); p != nil {
			call.panicked = p
			call.err = fmt.Errorf("roomoutbox: statements callback panicked: %v", p)
			status = C.ROOM_OUTBOX_INTERNAL
		}
	}()
	// The callback may run twice (see Commit): only the last run's outcome counts.
	call.err = nil
	if e := stoppedBy(call.ctx, "before the statements callback"); e != nil {
		call.err = e
		return stoppedStatus(e)
	}
	if call.fn != nil {
		call.err = call.fn(tx)
	}
	// Waits for an Exec a goroutine of the callback still runs; none runs after this.
	failed := tx.end()
	// The last check before the outbox rows and COMMIT.
	if e := stoppedBy(call.ctx, "before COMMIT"); e != nil {
		if call.err == nil {
			call.err = e
		}
		return stoppedStatus(e)
	}
	if call.err == nil {
		return C.ROOM_OUTBOX_OK
	}
	if failed != 0 {
		return failed // the commit fails with the failed statement's error
	}
	return C.ROOM_OUTBOX_CANCELLED
}

//export roomOutboxLog
func roomOutboxLog(handle C.uintptr_t, level C.int32_t, message *C.char, length C.size_t) {
	log := cgo.Handle(handle).Value().(func(Level, string))
	defer func() {
		_ = recover() // a logger's panic must not unwind through C; the line is dropped
	}()
	log(Level(level), C.GoStringN(message, C.int(length)))
}
