package roomoutbox

// #include <room_outbox/c.h>
import "C"

import (
	"errors"
	"fmt"
	"strings"
)

// Code says what kind of failure an Error is: the C ABI's room_outbox_status values, which
// mirror the hook's ErrorCode. New codes may be added; existing ones keep their meaning.
type Code int32

const (
	CodeInvalidArgument   Code = C.ROOM_OUTBOX_INVALID_ARGUMENT   // bad option, command or SQL parameter
	CodeNotFound          Code = C.ROOM_OUTBOX_NOT_FOUND          // e.g. an unreadable config file
	CodeAlreadyExists     Code = C.ROOM_OUTBOX_ALREADY_EXISTS     // e.g. a duplicate key in a caller statement
	CodePermissionDenied  Code = C.ROOM_OUTBOX_PERMISSION_DENIED  // credentials or rights refused
	CodeUnavailable       Code = C.ROOM_OUTBOX_UNAVAILABLE        // database gone, refused or reset
	CodeDeadlineExceeded  Code = C.ROOM_OUTBOX_DEADLINE_EXCEEDED  // a bounded call ran out of time
	CodeResourceExhausted Code = C.ROOM_OUTBOX_RESOURCE_EXHAUSTED // a rate limit answered
	CodeInternal          Code = C.ROOM_OUTBOX_INTERNAL           // a bug or an unexpected answer
	CodeCancelled         Code = C.ROOM_OUTBOX_CANCELLED          // the statements callback gave up
	CodeAborted           Code = C.ROOM_OUTBOX_ABORTED            // a lock conflict; run it again
	CodeNoMemory          Code = C.ROOM_OUTBOX_NO_MEMORY          // an allocation failed
)

// String is the code's name as the hook writes it in logs ("unavailable", ...).
func (c Code) String() string {
	return C.GoString(C.room_outbox_status_name(C.room_outbox_status(c)))
}

// Error is a failure the hook reported. Its Message says what failed and why and never holds a
// secret.
type Error struct {
	Code      Code
	Message   string
	Retryable bool // another try may succeed (unavailable, deadline exceeded, ...)
	cause     error
}

func (e *Error) Error() string {
	// The callback's error is shown unless it already is (or wraps) the statement's error.
	if e.cause != nil && !strings.Contains(e.cause.Error(), e.Message) {
		return fmt.Sprintf("roomoutbox: %s: %s: %v", e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("roomoutbox: %s: %s", e.Code, e.Message)
}

// Unwrap gives the statements callback's own error when it made the commit fail.
func (e *Error) Unwrap() error { return e.cause }

// Is matches the sentinels by code: errors.Is(err, ErrUnavailable).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.cause == nil && t.Code == e.Code
}

// Sentinels for errors.Is, one per Code.
var (
	ErrInvalidArgument   = &Error{Code: CodeInvalidArgument}
	ErrNotFound          = &Error{Code: CodeNotFound}
	ErrAlreadyExists     = &Error{Code: CodeAlreadyExists}
	ErrPermissionDenied  = &Error{Code: CodePermissionDenied}
	ErrUnavailable       = &Error{Code: CodeUnavailable, Retryable: true}
	ErrDeadlineExceeded  = &Error{Code: CodeDeadlineExceeded, Retryable: true}
	ErrResourceExhausted = &Error{Code: CodeResourceExhausted, Retryable: true}
	ErrInternal          = &Error{Code: CodeInternal}
	ErrCancelled         = &Error{Code: CodeCancelled}
	ErrAborted           = &Error{Code: CodeAborted, Retryable: true}
	ErrNoMemory          = &Error{Code: CodeNoMemory}
)

// NewError is an *Error as the hook reports it: Retryable as the code says, wrapping cause (nil:
// none), so errors.Is finds both the code's sentinel and the cause. For fakes and adapters
// (roomoutboxtest); the Hook makes its own.
func NewError(code Code, message string, cause error) *Error {
	retryable := false
	switch code {
	case CodeUnavailable, CodeDeadlineExceeded, CodeResourceExhausted, CodeAborted:
		retryable = true
	}
	return &Error{Code: code, Message: message, Retryable: retryable, cause: cause}
}

// ErrClosed is returned by a Hook used after Close.
var ErrClosed = errors.New("roomoutbox: hook is closed")

// copyError copies a C error that the caller keeps owning.
func copyError(cerr *C.room_outbox_error) *Error {
	return &Error{
		Code:      Code(C.room_outbox_error_code(cerr)),
		Message:   C.GoString(C.room_outbox_error_message(cerr)),
		Retryable: C.room_outbox_error_retryable(cerr) != 0,
	}
}

// statusError is the *Error of a failing call: a copy of its C error, which it frees. Without one
// (the error itself could not be allocated) the status's name is the message.
func statusError(status C.room_outbox_status, cerr *C.room_outbox_error) *Error {
	if cerr == nil {
		return &Error{Code: Code(status), Message: Code(status).String()}
	}
	defer C.room_outbox_error_free(cerr)
	return copyError(cerr)
}
