package roomoutbox

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
	return tx.exec(query, args, true)
}
