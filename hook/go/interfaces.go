package roomoutbox

import "context"

// Tx is the commit's open transaction as the statements callback sees it, valid only during the
// callback. The Hook's Tx is safe for concurrent use by goroutines the callback starts (their
// statements run one at a time on the commit's connection; the callback waits for them before it
// returns, since a call after it returned is refused with CodeInvalidArgument). In a service's
// unit tests roomoutboxtest.Tx records the statements instead.
type Tx interface {
	// Exec runs one statement with ? placeholders as a prepared statement in the commit's
	// transaction. args may be nil, bool, integers, float32/64, string or []byte. A failed Exec
	// makes the whole commit roll back: return its error from the callback. Once the Commit's
	// context is done Exec runs nothing and returns an *Error wrapping ctx.Err().
	Exec(query string, args ...interface{}) error
	// ExecAffected is Exec that also returns how many rows the statement matched (like
	// database/sql's Result.RowsAffected): for an UPDATE the rows its WHERE found, whether or
	// not their values changed (the hook connects with CLIENT_FOUND_ROWS); for DELETE the rows
	// deleted; for INSERT the rows inserted (INSERT ... ON DUPLICATE KEY UPDATE: 1 per new row, 2
	// per updated row, 1 per row found already equal); for REPLACE deleted + inserted; for a
	// SELECT the rows it returned. On error it returns 0.
	//
	// The optimistic check of a room snapshot:
	//
	//	n, err := tx.ExecAffected("UPDATE room_snapshot SET room_seq = ?, state = ? "+
	//		"WHERE room_id = ? AND room_seq = ?", cmd.RoomSeq, state, cmd.RoomID, cmd.RoomSeq-1)
	//	if err != nil {
	//		return err
	//	}
	//	if n != 1 {
	//		return errLostRace // another command moved the room first: the whole command rolls back
	//	}
	ExecAffected(query string, args ...interface{}) (int64, error)
}

// Committer is what a room service's command path needs of the hook: *Hook implements it, and
// so does roomoutboxtest.Hook, the fake for the service's unit tests (no database, no IM).
// Depend on Committer where commands are handled; Open the *Hook (and Close it) in main.
type Committer interface {
	// Commit is CommitContext with context.Background().
	Commit(cmd Command, events []Event, statements func(tx Tx) error) (Result, error)
	// CommitContext commits cmd, its events and the statements' writes in one transaction and
	// reports what became of the command and of each event (see Hook.CommitContext).
	CommitContext(ctx context.Context, cmd Command, events []Event, statements func(tx Tx) error) (Result, error)
}

var _ Committer = (*Hook)(nil)
