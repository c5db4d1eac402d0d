package outboxsql

// Every SQL text of the package: the rows of docs/sql-contract.md ("Writing rows without the
// hook"), the columns the contract names and no others, every value a parameter.

// serverNowMs is the database server's clock in epoch milliseconds, as the hook's
// CAST(UNIX_TIMESTAMP(NOW(3)) * 1000 AS SIGNED) under time_zone '+00:00', but from UTC_TIMESTAMP,
// so it holds whatever time_zone the caller's session has (the package never changes the
// session). The same instant for every use in one statement.
const serverNowMs = "(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', UTC_TIMESTAMP(3)) DIV 1000)"

// uk_command_id: a repeated command_id fails, which Write resolves with findCommand.
// Parameters: command_id, room_id, command_type, request_id, room_seq, payload.
const insertCommandLog = "INSERT INTO room_command_log (command_id, room_id, command_type, " +
	"request_id, room_seq, payload, created_at_ms) VALUES (?, ?, ?, ?, ?, ?, " + serverNowMs + ")"

// The outbox rows of a command: insertOutboxHead, then one row text per row, comma-separated.
// Parameters per row: event_id, event_type, room_id, command_id, request_id, envelope. A pending
// row is due at once with no claim token; a row of a type never sent is written published.
const (
	insertOutboxHead = "INSERT INTO room_outbox (event_id, event_type, room_id, command_id, " +
		"request_id, envelope, status, next_attempt_at_ms, created_at_ms, updated_at_ms, " +
		"published_at_ms) VALUES "
	insertOutboxPending = "(?, ?, ?, ?, ?, ?, 'pending', " + serverNowMs + ", " + serverNowMs +
		", " + serverNowMs + ", NULL)"
	insertOutboxPublished = "(?, ?, ?, ?, ?, ?, 'published', " + serverNowMs + ", " +
		serverNowMs + ", " + serverNowMs + ", " + serverNowMs + ")"
	paramsPerOutboxRow = 6
)

// The hook's chunking of a command's rows (hook/src/store/outbox_insert.h): at most 16 rows and
// about 256 KiB of values per INSERT, so no statement outgrows max_allowed_packet.
const (
	maxRowsPerOutboxInsert  = 16
	maxBytesPerOutboxInsert = 256 * 1024
)

// A locking read: a transaction of the command still open on the server is waited for.
// Parameter: command_id.
const findCommand = "SELECT id FROM room_command_log WHERE command_id = ? LOCK IN SHARE MODE"

// Whether a command has outbox rows (idx_command_id). Parameter: command_id.
const commandHasRows = "SELECT COUNT(*) FROM room_outbox WHERE command_id = ?"

// Whether the server is read-only (a replica a failover reached): a command missing there may
// not have arrived yet.
const serverReadOnly = "SELECT @@global.read_only"
