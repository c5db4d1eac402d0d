// Package roomoutbox is the room-outbox hook for Go room services: it commits a room command,
// its events and the service's own statements (e.g. the room snapshot) in one MySQL/MariaDB
// transaction, then tries a short sync publish of the events to Tencent Cloud IM. What it cannot
// publish stays pending in the room_outbox table, and the outbox-relay daemon delivers it. A
// committed command is reported committed whatever IM did.
//
// It is a thin cgo layer over the hook's C ABI (room_outbox/c.h), linked through
// `pkg-config room_outbox_hook` against the installed libroom_outbox_hook.so.1 (C ABI 1.1 or
// later).
//
//	import roomoutbox "github.com/room-outbox/room-outbox/hook/go"
//
//	hook, err := roomoutbox.Open("/etc/room-outbox/relay.toml", roomoutbox.WithPoolSize(8))
//	if err != nil { ... }           // err names the config key or the connection problem
//	defer hook.Close()
//	cmd := roomoutbox.Command{CommandID: "cmd-42", RoomID: "room-7", CommandType: "SendGift",
//		RequestID: "req-42", RoomSeq: 12, Payload: `{"user_id":"u1","gift":"rose"}`}
//	events := []roomoutbox.Event{{EventID: "evt-42-0", EventType: "RoomGiftSent", RoomSeq: 12,
//		Payload: `{"gift":"rose","from":"u1"}`}}
//	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
//	defer cancel()
//	res, err := hook.CommitContext(ctx, cmd, events, func(tx roomoutbox.Tx) error {
//		n, err := tx.ExecAffected("UPDATE room_snapshot SET room_seq = ?, state = ? "+
//			"WHERE room_id = ? AND room_seq = ?", cmd.RoomSeq, state, cmd.RoomID, cmd.RoomSeq-1)
//		if err == nil && n != 1 {
//			err = errLostRace // another command moved the room first: roll back
//		}
//		return err
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
// # Module path
//
// The module is github.com/room-outbox/room-outbox/hook/go (the package is named roomoutbox).
// Until that repository is published, require it from a local checkout with a replace
// directive in the service's go.mod:
//
//	require github.com/room-outbox/room-outbox/hook/go v0.0.0
//	replace github.com/room-outbox/room-outbox/hook/go => /path/to/room-outbox/hook/go
//
// # Goroutines
//
// A *Hook is safe for concurrent use by many goroutines. It holds a pool of WithPoolSize
// members (1 by default); each member is a hook of its own with one database connection (a
// transaction is open on it during a Commit) and one HTTP connection to IM. A Commit takes a free
// member or waits for one (CommitContext: as long as its ctx lasts), so n members run n Commits
// at once. The members share the process-wide state of the hook: the IM app's request budget and
// the process's one membership in it, and the sync breaker, so a pool of n draws on one share of
// the app's budget, not n.
//
// Commit is CommitContext with context.Background(). CommitContext honours ctx up to COMMIT:
// waiting for a member, before the callback, before each Tx statement and after the callback
// returns (the last check before COMMIT); then it rolls the command back and returns an *Error
// wrapping ctx.Err(). A statement already running runs to its end first. After COMMIT was sent
// the outcome is the server's, whatever ctx says.
//
// The hook keeps no per-thread state, so no runtime.LockOSThread is needed. The statements
// callback runs on the goroutine that called Commit, inside the call; it may run twice for one
// Commit (when the connection failed before COMMIT was sent, the server rolled the first run
// back and the hook runs the command again), so it must only write through the Tx it is given.
// It must not end the transaction: Tx.Exec refuses COMMIT, ROLLBACK, BEGIN, DDL and SET
// autocommit (ErrInvalidArgument), and a Commit on the same Hook from inside the callback returns
// ErrInvalidArgument at once, whether or not a member is free, instead of waiting for itself or
// running a second transaction beside the first. The Tx is safe for concurrent use: goroutines
// the callback starts may call Exec and ExecAffected, one statement at a time; the callback
// waits for them before it returns, since a call after it returned is refused
// (ErrInvalidArgument).
// A logger given with WithLogger is called from every member, concurrently, and from the hook's
// own threads when [hook] sync_publish = "background".
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
