package roomoutbox

// ExecAffected is Tx.ExecAffected on the commit's connection (CLIENT_FOUND_ROWS: an UPDATE
// counts the rows its WHERE found).
func (tx *hookTx) ExecAffected(query string, args ...interface{}) (int64, error) {
	return tx.exec(query, args, true)
}
