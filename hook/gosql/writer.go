package outboxsql

import (
	"context"
	"database/sql"
	"strings"
	"time"
)

// Tx is what Write needs of the caller's transaction. *sql.Tx has it, and so has every
// transaction type that embeds or exposes one (sqlx's *sqlx.Tx, the *sql.Tx under gorm's and
// ent's transactions).
type Tx interface {
	ExecContext(ctx context.Context, query string, args ...interface{}) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...interface{}) *sql.Row
}

// Writer writes commands and their events by the SQL contract. It holds only its Options and is
// safe for concurrent use by many goroutines.
type Writer struct {
	opts Options
	now  func() time.Time // the default occurred_at_ms (the host's clock; information only)
}

// New checks the Options and fills their defaults. Its errors are *Error with
// CodeInvalidArgument naming the field.
func New(o Options) (*Writer, error) {
	n, err := o.normalized()
	if err != nil {
		return nil, err
	}
	return &Writer{opts: n, now: time.Now}, nil
}

// Options are the Writer's options with their defaults filled.
func (w *Writer) Options() Options { return w.opts }

// Check runs the checks Write runs before it writes anything: ids and names fit their columns
// and are UTF-8, payloads are JSON objects within the envelope's limits, the room's IM GroupId
// is one Tencent accepts and every event sent to IM fits MaxBodyBytes. A nil error means Write
// would write the command (unless the database refuses it).
func (w *Writer) Check(cmd Command, events []Event) error {
	_, err := prepare(&w.opts, cmd, events, w.now().UnixMilli())
	return err
}

// Write writes cmd's room_command_log row and one room_outbox row per event, in order, into
// the caller's transaction tx, as the hook writes them. It changes nothing else: the caller
// commits or rolls back, and after a successful COMMIT calls Wake (or lets the relay find the
// rows at its next poll).
//
//   - Written: the rows are in tx; Result.Events says which are pending (for the relay) and
//     which skipped (written published).
//   - Duplicate, nil error: cmd.CommandID was committed before; nothing was written. Roll tx
//     back: the command was applied already.
//   - An *Error: CodeInvalidArgument when a check refused the command (nothing was written),
//     CodeDatabase when a statement failed (Unwrap gives the driver's error). Roll tx back.
//
// Write the command in the transaction that applies it to the room's state, and commit a room's
// commands one after the other (id order is delivery order within a room).
func (w *Writer) Write(ctx context.Context, tx Tx, cmd Command, events []Event) (Result, error) {
	p, err := prepare(&w.opts, cmd, events, w.now().UnixMilli())
	if err != nil {
		return Result{Status: Failed}, err
	}
	if dup, err := insertCommandLogRow(ctx, tx, p); err != nil || dup {
		if err != nil {
			return Result{Status: Failed}, err
		}
		return Result{Status: Duplicate}, nil
	}
	if err := insertOutboxRows(ctx, tx, p); err != nil {
		return Result{Status: Failed}, err
	}
	return p.result(Written), nil
}

// insertCommandLogRow inserts the command log row; true when command_id was there already. A
// failed insert is a duplicate when the command_id is found by a locking read (so any driver's
// duplicate-key error is recognised without parsing it, and a transaction of the same command
// still open elsewhere is waited for).
func insertCommandLogRow(ctx context.Context, tx Tx, p *prepared) (bool, error) {
	c := &p.cmd
	_, err := tx.ExecContext(ctx, insertCommandLog, c.CommandID, c.RoomID, c.CommandType,
		c.RequestID, c.RoomSeq, c.Payload)
	if err == nil {
		return false, nil
	}
	var id int64
	if tx.QueryRowContext(ctx, findCommand, c.CommandID).Scan(&id) != nil {
		return false, dbError("insert room_command_log for command "+printable(c.CommandID), err)
	}
	if len(p.rows) == 0 {
		return true, nil
	}
	// The hook's rule (CheckDuplicateHasEvents): a command logged without outbox rows lost its
	// events; calling it a duplicate would lose them for good.
	var rows int64
	if err := tx.QueryRowContext(ctx, commandHasRows, c.CommandID).Scan(&rows); err != nil {
		return false, dbError("count the outbox rows of command "+printable(c.CommandID), err)
	}
	if rows == 0 {
		return false, &Error{Code: CodeInternal, Message: "command_id " + c.CommandID +
			" is in room_command_log without outbox rows: an earlier commit's statements " +
			"callback ended its transaction, so its events were never written (or its " +
			"published events were purged since); not a duplicate. Commit the events under a " +
			"new command_id"}
	}
	return true, nil
}

// insertOutboxRows inserts the rows in order, in statements of outboxChunk rows.
func insertOutboxRows(ctx context.Context, tx Tx, p *prepared) error {
	rows := p.rows
	for len(rows) > 0 {
		n := outboxChunk(rows, len(p.cmd.RoomID)+len(p.cmd.CommandID)+len(p.cmd.RequestID))
		var text strings.Builder
		text.WriteString(insertOutboxHead)
		args := make([]interface{}, 0, n*paramsPerOutboxRow)
		for i, row := range rows[:n] {
			if i > 0 {
				text.WriteString(", ")
			}
			if row.published {
				text.WriteString(insertOutboxPublished)
			} else {
				text.WriteString(insertOutboxPending)
			}
			args = append(args, row.eventID, row.eventType, p.cmd.RoomID, p.cmd.CommandID,
				p.cmd.RequestID, string(row.envelope))
		}
		if _, err := tx.ExecContext(ctx, text.String(), args...); err != nil {
			return dbError("insert room_outbox rows of command "+printable(p.cmd.CommandID), err)
		}
		rows = rows[n:]
	}
	return nil
}

// outboxChunk is how many of rows (at least one) the next INSERT takes; shared is the bytes
// every row repeats (room, command and request ids).
func outboxChunk(rows []outboxRow, shared int) int {
	n, bytes := 0, 0
	for n < len(rows) && n < maxRowsPerOutboxInsert {
		b := shared + len(rows[n].eventID) + len(rows[n].eventType) + len(rows[n].envelope)
		if n > 0 && bytes+b > maxBytesPerOutboxInsert {
			break
		}
		bytes += b
		n++
	}
	return n
}
