// Package roomoutbox is the room-outbox hook for Go room services: it commits a room command,
// its events and the service's own statements (e.g. the room snapshot) in one MySQL/MariaDB
// transaction, then tries a short sync publish of the events to Tencent Cloud IM. What it cannot
// publish stays pending in the room_outbox table, and the outbox-relay daemon delivers it. A
// committed command is reported committed whatever IM did.
//
// It is a thin cgo layer over the hook's C ABI (room_outbox/c.h), linked through
// `pkg-config room_outbox_hook` against the installed libroom_outbox_hook.so.1.
//
//	hook, err := roomoutbox.Open("/etc/room-outbox/relay.toml")
//	if err != nil { ... }           // err names the config key or the connection problem
//	defer hook.Close()
//	res, err := hook.Commit(cmd, events, func(tx *roomoutbox.Tx) error {
//		return tx.Exec("UPDATE room_snapshot SET room_seq = ?, state = ? WHERE room_id = ?",
//			cmd.RoomSeq, state, cmd.RoomID)
//	})
//	switch {
//	case err != nil:                // Failed (rolled back) or Unknown (see CommitStatus)
//	case res.Status == roomoutbox.Duplicate: // command_id seen before: nothing written
//	default:                        // Committed: replace the in-memory room state
//	}
//
// Open reads the same TOML file as outbox-relay (node_id, [mysql], [tencent_im], [hook],
// [wake] socket, [outbox_worker] ordering, with the secrets from their files or the
// environment); WithSetting and WithSecret override single keys by their relay.toml names.
//
// # Goroutines
//
// A *Hook serves one goroutine at a time: it owns one database connection (a transaction is
// open on it during Commit) and one HTTP connection to IM, and Commit blocks for up to
// [hook] sync_publish_timeout. A mutex inside makes concurrent calls wait for each other
// rather than corrupt the connection, so sharing one Hook among goroutines is safe but
// serialises them. For concurrency, use a pool: a buffered channel of *Hook, one per database
// connection you budget for.
//
//	pool := make(chan *roomoutbox.Hook, 8)
//	for i := 0; i < cap(pool); i++ {
//		h, err := roomoutbox.Open(path)
//		if err != nil { ... }
//		pool <- h
//	}
//	h := <-pool
//	res, err := h.Commit(cmd, events, snapshot)
//	pool <- h
//
// The hook keeps no per-thread state, so no runtime.LockOSThread is needed. The statements
// callback runs on the goroutine that called Commit, inside the call; it may run twice for one
// Commit (when the connection failed before COMMIT was sent, the server rolled the first run
// back and the hook runs the command again), so it must only write through the Tx it is given.
// It must not end the transaction: Tx.Exec refuses COMMIT, ROLLBACK, BEGIN, DDL and SET
// autocommit (ErrInvalidArgument), and a Commit on the same Hook from inside the callback returns
// ErrInvalidArgument at once instead of waiting for itself; another goroutine's Commit still
// waits for the running one. The Tx is safe for concurrent use: goroutines the callback starts
// may call Exec, one statement at a time; the callback waits for them before it returns, since
// an Exec after it returned is refused (ErrInvalidArgument).
// A logger given with WithLogger is also called from the hook's own thread when
// [hook] sync_publish = "background".
//
// # Errors
//
// Every error the hook reports is an *Error with a Code, a Message (never a secret) and
// Retryable; errors.Is matches it against the sentinels (ErrUnavailable, ErrInvalidArgument,
// ...), errors.As gives the *Error. When the statements callback returns an error, Commit's
// error also wraps that error, so errors.Is finds the callback's own sentinels. A duplicate
// command_id is not an error: it is Result.Status Duplicate.
//
// Close must be called: it closes the connections and, with sync_publish = "background", first
// publishes or hands to the relay what is queued (at most sync_publish_timeout). No finalizer
// does it.
package roomoutbox
