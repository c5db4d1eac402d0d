package outboxsql

import "fmt"

// Code says what kind of failure an Error is.
type Code int

const (
	// CodeInvalidArgument: the command, an event or the Options can never be written or
	// delivered as they are (a check at write time); nothing was written.
	CodeInvalidArgument Code = iota + 1
	// CodeDatabase: a statement failed; Unwrap gives the driver's error. Roll the transaction
	// back.
	CodeDatabase
	// CodeUnknownOutcome: Commit sent COMMIT, its answer was lost and the lookup that would tell
	// failed too. Commit the command again with the same command_id: Duplicate then means it
	// had committed.
	CodeUnknownOutcome
	// CodeInternal: the database holds what the package never writes (see the message).
	CodeInternal
	// CodeStatements: Commit's statements callback returned an error (Unwrap gives it); the
	// command was rolled back.
	CodeStatements
)

func (c Code) String() string {
	switch c {
	case CodeInvalidArgument:
		return "invalid_argument"
	case CodeDatabase:
		return "database"
	case CodeUnknownOutcome:
		return "unknown_outcome"
	case CodeInternal:
		return "internal"
	case CodeStatements:
		return "statements"
	}
	return fmt.Sprintf("code(%d)", int(c))
}

// Error is a failure of Write, Commit or New. Message says what failed and why; for
// CodeInvalidArgument it is the text the C++ hook gives for the same input (the shared test
// vectors in testdata/ hold both to it). It never holds a value of the statements' parameters
// beyond the ids it names.
type Error struct {
	Code    Code
	Message string
	Err     error // the driver's or the statements callback's error, if any
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("outboxsql: %s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("outboxsql: %s: %s", e.Code, e.Message)
}

// Unwrap gives the driver's or the callback's error.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the sentinels by code: errors.Is(err, outboxsql.ErrInvalidArgument).
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Err == nil && t.Code == e.Code
}

// Sentinels for errors.Is, one per Code.
var (
	ErrInvalidArgument = &Error{Code: CodeInvalidArgument}
	ErrDatabase        = &Error{Code: CodeDatabase}
	ErrUnknownOutcome  = &Error{Code: CodeUnknownOutcome}
	ErrInternal        = &Error{Code: CodeInternal}
	ErrStatements      = &Error{Code: CodeStatements}
)

func invalid(message string) *Error { return &Error{Code: CodeInvalidArgument, Message: message} }

func dbError(message string, err error) *Error {
	return &Error{Code: CodeDatabase, Message: message, Err: err}
}
