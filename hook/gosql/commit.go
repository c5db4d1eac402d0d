package outboxsql

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// lookupTimeout bounds the lookup that resolves a COMMIT whose answer was lost.
const lookupTimeout = 10 * time.Second

// Commit is the hook's Commit on the caller's *sql.DB: in one transaction the command log row,
// the caller's statements (e.g. the room's state; statements may be nil), then the outbox rows;
// COMMIT; then, when a row was left pending, one wake-up datagram to the relay. The checks run
// before BEGIN.
//
//   - Committed, nil error: durable; Result.Events says which rows the relay delivers.
//   - Duplicate, nil error: cmd.CommandID was committed before; rolled back, nothing written,
//     the statements callback did not run.
//   - Failed and an *Error: rolled back (CodeInvalidArgument: a check; CodeStatements: the
//     callback's error, which Unwrap gives; CodeDatabase: a statement or COMMIT failed).
//   - Unknown and an *Error (CodeUnknownOutcome): COMMIT's answer was lost and the lookup that
//     would tell failed; commit again with the same CommandID (Duplicate: it had committed).
//
// A COMMIT that fails is resolved as the hook resolves a lost COMMIT answer: the command_id is
// looked up with a locking read on another connection (found: Committed; not found on a
// writable server: Failed; not found on a read-only one, or no answer: Unknown). ctx bounds
// everything up to COMMIT.
func (w *Writer) Commit(ctx context.Context, db *sql.DB, cmd Command, events []Event,
	statements func(tx *sql.Tx) error) (Result, error) {
	p, err := prepare(&w.opts, cmd, events, w.now().UnixMilli())
	if err != nil {
		return Result{Status: Failed}, err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return Result{Status: Failed}, dbError("begin the transaction of command "+printable(cmd.CommandID), err)
	}
	status, err := writeInTx(ctx, tx, p, statements)
	if err != nil || status == Duplicate {
		_ = tx.Rollback() // the error (or the duplicate) is what the caller needs to know
		if err != nil {
			return Result{Status: Failed}, err
		}
		return Result{Status: Duplicate}, nil
	}
	if err := tx.Commit(); err != nil {
		if s, lookupErr := resolveFailedCommit(db, p.cmd.CommandID, err); s != Committed {
			return Result{Status: s}, lookupErr
		}
	}
	res := p.result(Committed)
	if res.pending() {
		_ = w.Wake() // best effort: a missed wake-up only waits for the relay's next poll
	}
	return res, nil
}

// writeInTx is everything between BEGIN and COMMIT, in the hook's order: the command log row,
// the caller's statements, the outbox rows last.
func writeInTx(ctx context.Context, tx *sql.Tx, p *prepared, statements func(*sql.Tx) error) (Status, error) {
	dup, err := insertCommandLogRow(ctx, tx, p)
	if err != nil || dup {
		return Duplicate, err
	}
	if statements != nil {
		if err := statements(tx); err != nil {
			return Failed, &Error{Code: CodeStatements, Message: "the statements callback of command " +
				printable(p.cmd.CommandID) + " failed; rolled back", Err: err}
		}
	}
	if err := insertOutboxRows(ctx, tx, p); err != nil {
		return Failed, err
	}
	return Written, nil
}

// resolveFailedCommit looks commandID up after COMMIT failed with commitErr: Committed (nil
// error), Failed or Unknown with the error to report.
func resolveFailedCommit(db *sql.DB, commandID string, commitErr error) (Status, error) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	found, err := lookUpCommand(ctx, db, commandID)
	if err != nil {
		return Unknown, &Error{Code: CodeUnknownOutcome, Message: "commit outcome unknown " +
			"(retry with the same command_id): COMMIT failed (" + commitErr.Error() +
			") and the lookup failed", Err: err}
	}
	if found {
		return Committed, nil
	}
	var readOnly int64
	if db.QueryRowContext(ctx, serverReadOnly).Scan(&readOnly) == nil && readOnly != 0 {
		return Unknown, &Error{Code: CodeUnknownOutcome, Message: "commit outcome unknown " +
			"(retry with the same command_id once the database accepts writes): COMMIT failed " +
			"and the command is not in room_command_log of a read-only server, which may not " +
			"have applied it yet", Err: commitErr}
	}
	return Failed, dbError("COMMIT failed and the command is not in room_command_log: rolled back", commitErr)
}

// lookUpCommand reports whether commandID is in room_command_log, by a locking read that waits
// for a transaction of the command still open on the server.
func lookUpCommand(ctx context.Context, db *sql.DB, commandID string) (bool, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }() // a read: nothing to keep
	var id int64
	switch err := tx.QueryRowContext(ctx, findCommand, commandID).Scan(&id); {
	case err == nil:
		return true, nil
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	default:
		return false, err
	}
}
