package roomoutbox

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import (
	"context"
	"fmt"
	"math"
	"sync"
)

// Command is one command the room service applied.
type Command struct {
	CommandID   string // the idempotency key: a repeated CommandID writes nothing (Duplicate)
	RoomID      string
	CommandType string // e.g. "JoinRoom"
	RequestID   string // tracing only
	RoomSeq     int64  // the room's version after the command
	Payload     string // JSON object text stored in the command log; "" means "{}"
}

// Event is one event the command produced; the room, command, request and node come from the
// Command and the hook.
type Event struct {
	EventID      string // unique; clients dedupe by it
	EventType    string // e.g. "RoomGiftSent"
	RoomSeq      int64  // the room's version this event reflects
	OccurredAtMs int64  // Unix epoch ms; 0 means the commit time
	Payload      string // JSON object text; "" means "{}"
}

// CommitStatus is what became of a command.
type CommitStatus int32

const (
	Committed CommitStatus = C.ROOM_OUTBOX_COMMITTED // durable, whatever IM did
	Duplicate CommitStatus = C.ROOM_OUTBOX_DUPLICATE // CommandID was committed before: nothing written
	Failed    CommitStatus = C.ROOM_OUTBOX_FAILED    // rolled back; nothing published
	// Unknown: COMMIT was sent and its answer lost, and the lookup that would tell failed too.
	// Do not apply the command yet; commit again with the same CommandID: Duplicate means it
	// had committed, Committed that it had not (and now has).
	Unknown CommitStatus = C.ROOM_OUTBOX_UNKNOWN
)

func (s CommitStatus) String() string {
	return [...]string{"committed", "duplicate", "failed", "unknown"}[s&3]
}

// DeliveryState is what became of one event of a committed command.
type DeliveryState int32

const (
	Published DeliveryState = C.ROOM_OUTBOX_PUBLISHED // the sync publish delivered it
	Skipped   DeliveryState = C.ROOM_OUTBOX_SKIPPED   // a type never sent to IM (skip_event_types)
	Pending   DeliveryState = C.ROOM_OUTBOX_PENDING   // left for outbox-relay; EventDelivery.Error says why
	Queued    DeliveryState = C.ROOM_OUTBOX_QUEUED    // sync_publish = "background": the hook's thread has it
)

func (s DeliveryState) String() string {
	return [...]string{"published", "skipped", "pending", "queued"}[s&3]
}

// EventDelivery is one event's state after Commit.
type EventDelivery struct {
	EventID string
	State   DeliveryState
	Error   string // why it was left pending (short, secret-free); "" otherwise
}

// Result of Commit. Events has one entry per event, in order, when Status is Committed.
type Result struct {
	Status CommitStatus
	Events []EventDelivery
}

// hookTx is the Hook's Tx: the commit's open transaction on the member's connection, valid only
// during the statements callback. Safe for concurrent use: goroutines the callback starts may
// call Exec, and their statements run one at a time on the commit's connection. The callback
// must wait for them before it returns; an Exec after the callback returned is refused
// (CodeInvalidArgument).
type hookTx struct {
	mu     sync.Mutex           // held by each Exec and by end: one statement at a time
	c      *C.room_outbox_tx    // nil once the callback returned
	failed C.room_outbox_status // the first failed Exec's status
	ctx    context.Context      // the Commit's: a done ctx refuses the next statement
}

// end makes the Tx refuse every later Exec, after waiting for the one in progress, and returns
// the first failed Exec's status (0: none failed).
func (tx *hookTx) end() C.room_outbox_status {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.c = nil
	return tx.failed
}

// Exec is Tx.Exec on the commit's connection.
func (tx *hookTx) Exec(query string, args ...interface{}) error {
	_, err := tx.exec(query, args, false)
	return err
}

// exec runs one statement under the Tx's lock (one statement at a time, none after the callback
// returned); with counted, through room_outbox_tx_execute_affected, returning the rows matched.
func (tx *hookTx) exec(query string, args []interface{}, counted bool) (int64, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.c == nil {
		return 0, &Error{Code: CodeInvalidArgument, Message: "Tx used outside its statements callback"}
	}
	if err := tx.stopped(); err != nil {
		return 0, err
	}
	params := C.room_outbox_params_new()
	if params == nil {
		return 0, ErrNoMemory
	}
	defer C.room_outbox_params_destroy(params)
	for i, arg := range args {
		if status := addParam(params, arg); status != C.ROOM_OUTBOX_OK {
			return 0, &Error{Code: Code(status), Message: fmt.Sprintf("parameter %d: unsupported type %T", i+1, arg)}
		}
	}
	var cerr *C.room_outbox_error
	var affected C.uint64_t
	status := withText(query, func(p *C.char, n C.size_t) C.room_outbox_status {
		if counted {
			return C.room_outbox_tx_execute_affected(tx.c, p, n, params, &affected, &cerr)
		}
		return C.room_outbox_tx_execute(tx.c, p, n, params, &cerr)
	})
	if status != C.ROOM_OUTBOX_OK {
		if tx.failed == 0 {
			tx.failed = status
		}
		return 0, statusError(status, cerr)
	}
	return int64(affected), nil
}

func addParam(params *C.room_outbox_params, arg interface{}) C.room_outbox_status {
	switch v := arg.(type) {
	case nil:
		return C.room_outbox_params_add_null(params)
	case bool:
		if v {
			return C.room_outbox_params_add_int(params, 1)
		}
		return C.room_outbox_params_add_int(params, 0)
	case int:
		return C.room_outbox_params_add_int(params, C.int64_t(v))
	case int32:
		return C.room_outbox_params_add_int(params, C.int64_t(v))
	case int64:
		return C.room_outbox_params_add_int(params, C.int64_t(v))
	case uint32:
		return C.room_outbox_params_add_int(params, C.int64_t(v))
	case uint64:
		if v > math.MaxInt64 {
			return C.ROOM_OUTBOX_INVALID_ARGUMENT
		}
		return C.room_outbox_params_add_int(params, C.int64_t(v))
	case float32:
		return C.room_outbox_params_add_double(params, C.double(v))
	case float64:
		return C.room_outbox_params_add_double(params, C.double(v))
	case string:
		return withText(v, func(p *C.char, n C.size_t) C.room_outbox_status {
			return C.room_outbox_params_add_text(params, p, n)
		})
	case []byte:
		return withText(string(v), func(p *C.char, n C.size_t) C.room_outbox_status {
			return C.room_outbox_params_add_text(params, p, n)
		})
	}
	return C.ROOM_OUTBOX_INVALID_ARGUMENT
}

// newCommand builds the C command; the caller destroys it.
func newCommand(cmd Command, events []Event) (*C.room_outbox_command, error) {
	c := C.room_outbox_command_new()
	if c == nil {
		return nil, ErrNoMemory
	}
	var cerr *C.room_outbox_error
	check := func(status C.room_outbox_status) bool { return status == C.ROOM_OUTBOX_OK }
	ok := check(setText(c, "command_id", cmd.CommandID, &cerr)) &&
		check(setText(c, "room_id", cmd.RoomID, &cerr)) &&
		check(setText(c, "command_type", cmd.CommandType, &cerr)) &&
		check(setText(c, "request_id", cmd.RequestID, &cerr)) &&
		check(setText(c, "payload", orEmptyObject(cmd.Payload), &cerr)) &&
		check(withName("room_seq", func(f *C.char) C.room_outbox_status {
			return C.room_outbox_command_set_int(c, f, C.int64_t(cmd.RoomSeq), &cerr)
		}))
	for i := 0; ok && i < len(events); i++ {
		ok = check(addEvent(c, C.size_t(i), events[i], &cerr))
	}
	if !ok {
		C.room_outbox_command_destroy(c)
		return nil, statusError(C.room_outbox_error_code(cerr), cerr)
	}
	return c, nil
}

func setText(c *C.room_outbox_command, field, value string, cerr **C.room_outbox_error) C.room_outbox_status {
	return withName(field, func(f *C.char) C.room_outbox_status {
		return withText(value, func(p *C.char, n C.size_t) C.room_outbox_status {
			return C.room_outbox_command_set_text(c, f, p, n, cerr)
		})
	})
}

func addEvent(c *C.room_outbox_command, index C.size_t, e Event, cerr **C.room_outbox_error) C.room_outbox_status {
	status := withText(e.EventID, func(id *C.char, idLen C.size_t) C.room_outbox_status {
		return withText(e.EventType, func(typ *C.char, typLen C.size_t) C.room_outbox_status {
			return withText(orEmptyObject(e.Payload), func(p *C.char, n C.size_t) C.room_outbox_status {
				return C.room_outbox_command_add_event(c, id, idLen, typ, typLen, C.int64_t(e.RoomSeq), p, n, cerr)
			})
		})
	})
	if status != C.ROOM_OUTBOX_OK || e.OccurredAtMs == 0 {
		return status
	}
	return withName("occurred_at_ms", func(f *C.char) C.room_outbox_status {
		return C.room_outbox_command_set_event_int(c, index, f, C.int64_t(e.OccurredAtMs), cerr)
	})
}

func orEmptyObject(payload string) string {
	if payload == "" {
		return "{}"
	}
	return payload
}

// copyResult copies the C result into Go values (the caller destroys the C result).
func copyResult(r *C.room_outbox_result) Result {
	if r == nil {
		return Result{Status: Failed}
	}
	res := Result{Status: CommitStatus(C.room_outbox_result_status(r))}
	n := int(C.room_outbox_result_event_count(r))
	for i := 0; i < n; i++ {
		var idLen, errLen C.size_t
		id := C.room_outbox_result_event_id(r, C.size_t(i), &idLen)
		why := C.room_outbox_result_event_error(r, C.size_t(i), &errLen)
		res.Events = append(res.Events, EventDelivery{
			EventID: C.GoStringN(id, C.int(idLen)),
			State:   DeliveryState(C.room_outbox_result_event_state(r, C.size_t(i))),
			Error:   C.GoStringN(why, C.int(errLen)),
		})
	}
	return res
}
