package roomoutbox

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
)

// Hook commits room commands with their events and sync-publishes the events. It is safe for
// concurrent use by many goroutines: it holds a pool of WithPoolSize members (1 by default), each
// its own C hook with its own database and HTTP connection; a Commit takes a free member or waits
// for one (see the package documentation).
type Hook struct {
	members chan *C.room_outbox_hook // the free members; Close takes them all back
	size    int
	closed  chan struct{} // closed by Close: waiting and later Commits return ErrClosed
	closeMu sync.Mutex    // one Close at a time; isClosed makes the later ones return at once
	// isClosed is set under closeMu.
	isClosed bool
	// The goroutines running a statements callback of this Hook, to refuse a Commit from inside
	// the callback (it would wait for itself or run a second transaction beside the first).
	inStatements statementsGoroutines
	logger       cgo.Handle // 0 without a logger; deleted by Close after the C hooks are gone
	// Every member, free or not, for Metrics and MetricsText; nil once closed. life is held for
	// reading by those two and for writing by Close while it destroys the members: the metrics
	// never wait for a Commit, and never meet a destroyed member.
	life sync.RWMutex
	all  []*C.room_outbox_hook
}

// statementsGoroutines is the set of goroutines inside a statements callback of one Hook.
type statementsGoroutines struct {
	count atomic.Int32 // how many; the Commit path asks for its goroutine's id only when > 0
	ids   sync.Map     // goroutine id -> struct{}
}

func (s *statementsGoroutines) enter(id int64) {
	s.ids.Store(id, struct{}{})
	s.count.Add(1)
}

func (s *statementsGoroutines) leave(id int64) {
	s.count.Add(-1)
	s.ids.Delete(id)
}

// holds reports whether the calling goroutine runs a statements callback of the Hook.
func (s *statementsGoroutines) holds() bool {
	if s.count.Load() == 0 {
		return false
	}
	_, in := s.ids.Load(goroutineID())
	return in
}

// Open reads the hook's options from the relay.toml at configPath (empty: none, only the
// defaults, the environment's secrets and opts), applies opts in order, connects to the
// database and prepares the IM publisher. Before connecting it gives the logger (WithLogger)
// the configuration's warnings, once however large the pool, each at LevelWarn and starting
// "configuration warning: ": a secret file its group or other users may read, and a TCP link to
// a database host that is not loopback with an ssl_mode that does not verify the server. Errors are *Error: CodeInvalidArgument naming the
// key ("relay.toml:4:8: mysql.port: must be 1..65535, got 0"), CodeNotFound for an unreadable
// file, CodeUnavailable when the database cannot be reached.
func Open(configPath string, opts ...Option) (*Hook, error) {
	if err := initLibrary(); err != nil {
		return nil, err
	}
	o := openOptions{poolSize: 1}
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
	if o.poolSize < 1 {
		return nil, &Error{Code: CodeInvalidArgument,
			Message: fmt.Sprintf("WithPoolSize: must be at least 1, got %d", o.poolSize)}
	}
	h := &Hook{members: make(chan *C.room_outbox_hook, o.poolSize), size: o.poolSize,
		closed: make(chan struct{})}
	// Every member is made from the same options: what the first logs while it is made (the
	// configuration's warnings) the others would only repeat.
	var quiet atomic.Bool
	if o.logger != nil {
		logger := o.logger
		h.logger = cgo.NewHandle(func(level Level, line string) {
			if !quiet.Load() {
				logger(level, line)
			}
		})
		setLogger(copts, h.logger)
	}
	defer quiet.Store(false)
	for i := 0; i < h.size; i++ {
		quiet.Store(i > 0)
		var c *C.room_outbox_hook
		if status := C.room_outbox_hook_new(copts, &c, &cerr); status != C.ROOM_OUTBOX_OK {
			h.size = i
			_ = h.Close()
			return nil, statusError(status, cerr)
		}
		h.members <- c
		h.all = append(h.all, c)
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

// Close closes the hook's connections (with sync_publish = "background" each member first
// publishes or hands to the relay what is queued, for at most sync_publish_timeout). It waits for
// the Commits under way; Commits waiting for a member and later ones return ErrClosed. It is
// idempotent and returns nil. It must not be called from inside a statements callback.
func (h *Hook) Close() error {
	h.closeMu.Lock()
	defer h.closeMu.Unlock()
	if h.isClosed {
		return nil
	}
	h.isClosed = true
	close(h.closed)
	h.life.Lock()
	defer h.life.Unlock()
	for i := 0; i < h.size; i++ {
		C.room_outbox_hook_destroy(<-h.members)
	}
	h.all = nil
	h.deleteLogger()
	return nil
}

func (h *Hook) deleteLogger() {
	if h.logger != 0 {
		h.logger.Delete()
		h.logger = 0
	}
}

// Commit is CommitContext with context.Background(): it waits for a free member as long as it
// takes and is never cancelled.
func (h *Hook) Commit(cmd Command, events []Event, statements func(tx Tx) error) (Result, error) {
	return h.CommitContext(context.Background(), cmd, events, statements)
}

// goroutineID is the calling goroutine's id, read from its stack header ("goroutine 18 [...").
// Commit asks for it only while a statements callback of its Hook runs.
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
