package roomoutboxtest

import (
	"context"
	"errors"
	"sync"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// Tx is the fake's roomoutbox.Tx: it records each statement and answers it through
// Hook.Exec. Safe for concurrent use by goroutines of the callback, as the Hook's Tx; a
// statement after the callback returned is refused with CodeInvalidArgument, a failed one fails
// the commit whatever the callback returns, and a done ctx refuses the next statement.
type Tx struct {
	mu     sync.Mutex
	ctx    context.Context
	exec   func(query string, args []interface{}) (int64, error)
	ran    *[]Statement
	done   bool
	failed *roomoutbox.Error // the first failed statement's error
}

var _ roomoutbox.Tx = (*Tx)(nil)

// Exec records the statement.
func (tx *Tx) Exec(query string, args ...interface{}) error {
	_, err := tx.ExecAffected(query, args...)
	return err
}

// ExecAffected records the statement and returns Hook.Exec's answer (1 without one).
func (tx *Tx) ExecAffected(query string, args ...interface{}) (int64, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.done {
		return 0, roomoutbox.NewError(roomoutbox.CodeInvalidArgument, "Tx used outside its statements callback", nil)
	}
	if err := stopped(tx.ctx, "before a statement of the callback"); err != nil {
		return 0, err
	}
	*tx.ran = append(*tx.ran, Statement{Query: query, Args: append([]interface{}(nil), args...)})
	if tx.exec == nil {
		return 1, nil
	}
	n, err := tx.exec(query, args)
	if err == nil {
		return n, nil
	}
	var e *roomoutbox.Error
	if !errors.As(err, &e) {
		e = roomoutbox.NewError(roomoutbox.CodeInternal, "statement failed: "+err.Error(), err)
	}
	if tx.failed == nil {
		tx.failed = e
	}
	return 0, e
}

// end refuses every later statement, after the one in progress, and returns the first failed
// statement's error (nil: none failed).
func (tx *Tx) end() *roomoutbox.Error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	tx.done = true
	return tx.failed
}
