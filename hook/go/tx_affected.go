package roomoutbox

// #include <stdint.h>
// #include <room_outbox/c.h>
import "C"

import "fmt"

// ExecAffected is Exec that also returns how many rows the statement matched (like
// database/sql's Result.RowsAffected): for an UPDATE the rows its WHERE found, whether or not
// their values changed (the hook connects with CLIENT_FOUND_ROWS: "found rows", not "changed
// rows"); for DELETE the rows deleted; for INSERT the rows inserted (INSERT ... ON DUPLICATE KEY
// UPDATE: 1 per new row, 2 per updated row, 1 per row found already equal); for REPLACE deleted +
// inserted; for a SELECT the rows it returned. On error it returns 0.
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
func (tx *Tx) ExecAffected(query string, args ...interface{}) (int64, error) {
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
		return C.room_outbox_tx_execute_affected(tx.c, p, n, params, &affected, &cerr)
	})
	if status != C.ROOM_OUTBOX_OK {
		if tx.failed == 0 {
			tx.failed = status
		}
		return 0, statusError(status, cerr)
	}
	return int64(affected), nil
}
