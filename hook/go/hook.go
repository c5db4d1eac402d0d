package roomoutbox

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import (
	"bytes"
	"runtime"
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
)

// Hook commits room commands with their events and sync-publishes the events. See the package
// documentation for its goroutine rule: one goroutine at a time (a mutex serialises misuse),
// a pool for concurrency.
type Hook struct {
	mu sync.Mutex
	// Held for reading by Metrics and MetricsText, for writing by Close while it destroys c: the
	// metrics never wait for a Commit, and never meet a destroyed hook.
	life sync.RWMutex
	// The goroutine running this Hook's statements callback (0: none), to tell a Commit from
	// inside the callback, which would wait for itself, from another goroutine's, which waits.
	inStatements atomic.Int64
	c            *C.room_outbox_hook
	logger       cgo.Handle // 0 without a logger; deleted by Close after the C hook is gone
}

// Open reads the hook's options from the relay.toml at configPath (empty: none, only the
// defaults, the environment's secrets and opts), applies opts in order, connects to the
// database and prepares the IM publisher. Errors are *Error: CodeInvalidArgument naming the
// key ("relay.toml:4:8: mysql.port: must be 1..65535, got 0"), CodeNotFound for an unreadable
// file, CodeUnavailable when the database cannot be reached.
func Open(configPath string, opts ...Option) (*Hook, error) {
	if err := initLibrary(); err != nil {
		return nil, err
	}
	var o openOptions
	for _, opt := range opts {
		opt(&o)
	}
	copts := C.room_outbox_options_new()
	if copts == nil {
		return nil, ErrNoMemory
	}
	defer C.room_outbox_options_destroy(copts)
	var cerr *C.room_outbox_error
	if configPath != "" {
		status := withText(configPath, func(p *C.char, n C.size_t) C.room_outbox_status {
			return C.room_outbox_options_load_file(copts, p, n, &cerr)
		})
		if status != C.ROOM_OUTBOX_OK {
			return nil, statusError(status, cerr)
		}
	}
	for _, s := range o.settings {
		if err := set(copts, s); err != nil {
			return nil, err
		}
	}
	h := &Hook{}
	if o.logger != nil {
		h.logger = cgo.NewHandle(o.logger)
		setLogger(copts, h.logger)
	}
	if status := C.room_outbox_hook_new(copts, &h.c, &cerr); status != C.ROOM_OUTBOX_OK {
		h.deleteLogger()
		return nil, statusError(status, cerr)
	}
	return h, nil
}

func set(copts *C.room_outbox_options, s setting) error {
	var cerr *C.room_outbox_error
	status := withName(s.key, func(key *C.char) C.room_outbox_status {
		return withText(s.value, func(p *C.char, n C.size_t) C.room_outbox_status {
			return C.room_outbox_options_set(copts, key, p, n, &cerr)
		})
	})
	if status != C.ROOM_OUTBOX_OK {
		return statusError(status, cerr)
	}
	return nil
}

// Close closes the hook's connections (with sync_publish = "background" it first publishes or
// hands to the relay what is queued, for at most sync_publish_timeout). It is idempotent and
// returns nil; a Hook used after Close returns ErrClosed.
func (h *Hook) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.life.Lock()
	defer h.life.Unlock()
	if h.c != nil {
		C.room_outbox_hook_destroy(h.c)
		h.c = nil
	}
	h.deleteLogger()
	return nil
}

func (h *Hook) deleteLogger() {
	if h.logger != 0 {
		h.logger.Delete()
		h.logger = 0
	}
}

// Commit commits cmd, its events and the caller's statements in one transaction, then makes the
// sync publish (see the package documentation). statements may be nil; it runs inside the
// transaction on this goroutine and may run twice. The error is nil when the result is
// Committed or Duplicate; for Failed (rolled back) and Unknown (COMMIT's answer was lost: commit
// again with the same CommandID to learn which) it is an *Error, wrapping the statements
// callback's own error when that made the commit fail. A panic of the callback rolls the commit
// back and is raised again from Commit.
func (h *Hook) Commit(cmd Command, events []Event, statements func(tx *Tx) error) (Result, error) {
	if !h.mu.TryLock() {
		if running := h.inStatements.Load(); running != 0 && running == goroutineID() {
			return Result{Status: Failed}, &Error{Code: CodeInvalidArgument, Message: "Commit " +
				"refused: called from inside a statements callback of the same Hook (it would " +
				"commit the outer transaction); command_id=" + cmd.CommandID}
		}
		h.mu.Lock()
	}
	defer h.mu.Unlock()
	if h.c == nil {
		return Result{Status: Failed}, ErrClosed
	}
	ccmd, err := newCommand(cmd, events)
	if err != nil {
		return Result{Status: Failed}, err
	}
	defer C.room_outbox_command_destroy(ccmd)
	var handle cgo.Handle
	call := &statementsCall{fn: statements, hook: h}
	if statements != nil {
		handle = cgo.NewHandle(call)
		defer handle.Delete()
	}
	var cresult *C.room_outbox_result
	var cerr *C.room_outbox_error
	status := commit(h.c, ccmd, handle, &cresult, &cerr)
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
		e.cause = call.err
		return res, e
	}
	return res, nil
}

// goroutineID is the calling goroutine's id, read from its stack header ("goroutine 18 [...").
// Only the contended path of Commit asks for it.
func goroutineID() int64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf = bytes.TrimPrefix(buf, []byte("goroutine "))
	if end := bytes.IndexByte(buf, ' '); end > 0 {
		if id, err := strconv.ParseInt(string(buf[:end]), 10, 64); err == nil {
			return id
		}
	}
	return -1
}
