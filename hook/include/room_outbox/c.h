/* The C ABI of the room-outbox hook: the same commit as room_outbox/hook.h, for room services
 * written in C, Go (hook/go), Rust, Java, Python or anything else with a C FFI.
 *
 *   room_outbox_library_init(&err);                       once per process, before any hook
 *   opts = room_outbox_options_new();
 *   room_outbox_options_load_file(opts, path, len, &err); relay.toml: [mysql], [tencent_im], ...
 *   room_outbox_options_set(opts, "mysql.password", pw, pw_len, &err);   optional overrides
 *   room_outbox_hook_new(opts, &hook, &err);               connects to the database
 *   room_outbox_options_destroy(opts);                     the hook keeps its own copy
 *
 *   cmd = room_outbox_command_new();                       per command the room applied
 *   room_outbox_command_set_text(cmd, "command_id", id, id_len, &err);  ... room_id, ...
 *   room_outbox_command_add_event(cmd, event_id, n, event_type, n, room_seq, payload, n, &err);
 *   room_outbox_hook_commit(hook, cmd, snapshot_cb, user_data, &result, &err);
 *     BEGIN; command log; snapshot_cb(tx, user_data) runs the caller's statements through
 *     room_outbox_tx_execute in the same transaction; outbox rows; COMMIT; sync publish
 *   room_outbox_result_status(result), room_outbox_result_event_state(result, i), ...
 *   room_outbox_result_destroy(result); room_outbox_command_destroy(cmd);
 *   room_outbox_hook_destroy(hook);
 *
 * Conventions (the same for every function below):
 *   - C99. Opaque handles; plain fixed-width integers; no bool, no enum-typed parameter.
 *   - Every fallible call returns a room_outbox_status: ROOM_OUTBOX_OK (0) or an error code.
 *     When its `err` argument is not NULL, a failing call stores there a new room_outbox_error
 *     (code, message, retryable) that the caller frees with room_outbox_error_free; a call that
 *     succeeds stores NULL. Messages say what failed and why and never hold a secret.
 *   - Text crosses as (pointer, length): it need not be NUL-terminated, is copied before the call
 *     returns, and nothing the caller passed is kept. Names of keys and fields are NUL-terminated
 *     C strings. A NULL pointer with length 0 is the empty string.
 *   - Every object has a _new (or is handed out by a call) and a _destroy; _destroy(NULL) does
 *     nothing. Strings the library hands out are borrowed from the object they came from and
 *     stay valid until that object is destroyed; never free() them.
 *   - No C++ exception crosses this ABI: an unexpected failure is ROOM_OUTBOX_INTERNAL, an
 *     allocation failure ROOM_OUTBOX_NO_MEMORY.
 *   - Each function states its thread rule in one of three phrases: "any thread" (may run
 *     concurrently with anything), "not concurrently on one <object>" (different objects may be
 *     used from different threads at once; one object by one thread at a time), "only inside the
 *     callback" (on the thread that runs the statements callback, while it runs).
 *   - Status codes and the other constants are append-only: new values may appear, existing ones
 *     never change meaning.
 *
 * libroom_outbox_hook.so.1 (SONAME) keeps this ABI: a symbol is never removed and a signature
 * never changes without a new SONAME. */
#ifndef ROOM_OUTBOX_C_H_
#define ROOM_OUTBOX_C_H_

#include <stddef.h>
#include <stdint.h>

#include "room_outbox/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- version ------------------------------------------------------------------------------ */

/* The version of this header: 0xMMmmpp00 (major, minor, patch). room_outbox_c_version() returns
 * the library's own in the same encoding; a binding built against this header refuses a library
 * whose major differs or whose value is lower. */
#define ROOM_OUTBOX_C_VERSION 0x01010000

/* The library's ROOM_OUTBOX_C_VERSION. Any thread. */
ROOM_OUTBOX_EXPORT int32_t room_outbox_c_version(void);

/* --- status and errors -------------------------------------------------------------------- */

/* 0 is OK; 1..10 mirror room_outbox::ErrorCode (error.h) in its order; 11 is this ABI's own. */
typedef int32_t room_outbox_status;
#define ROOM_OUTBOX_OK 0
#define ROOM_OUTBOX_INVALID_ARGUMENT 1   /* bad input: option, command, SQL parameter */
#define ROOM_OUTBOX_NOT_FOUND 2          /* e.g. an unreadable config file */
#define ROOM_OUTBOX_ALREADY_EXISTS 3
#define ROOM_OUTBOX_PERMISSION_DENIED 4  /* credentials or rights refused */
#define ROOM_OUTBOX_UNAVAILABLE 5        /* database gone, refused or reset; retryable */
#define ROOM_OUTBOX_DEADLINE_EXCEEDED 6  /* a bounded call ran out of time; retryable */
#define ROOM_OUTBOX_RESOURCE_EXHAUSTED 7 /* a rate limit; retryable after a pause */
#define ROOM_OUTBOX_INTERNAL 8           /* a bug or an unexpected answer */
#define ROOM_OUTBOX_CANCELLED 9
#define ROOM_OUTBOX_ABORTED 10           /* a transaction lost a lock conflict; retryable */
#define ROOM_OUTBOX_NO_MEMORY 11         /* an allocation failed */

/* "ok", "invalid_argument", ... (the names of ErrorCodeName); "unknown" for a value this library
 * does not know. Static storage. Any thread. */
ROOM_OUTBOX_EXPORT const char *room_outbox_status_name(room_outbox_status status);

typedef struct room_outbox_error room_outbox_error;

/* The code of `err` (ROOM_OUTBOX_INTERNAL for NULL). Any thread. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_error_code(const room_outbox_error *err);
/* What failed and why, NUL-terminated, borrowed from `err` ("" for NULL). Any thread. */
ROOM_OUTBOX_EXPORT const char *room_outbox_error_message(const room_outbox_error *err);
/* 1 when another try may succeed (unavailable, deadline exceeded, resource exhausted, aborted),
 * else 0 (also for NULL). Any thread. */
ROOM_OUTBOX_EXPORT int32_t room_outbox_error_retryable(const room_outbox_error *err);
/* Frees `err`; NULL does nothing. Any thread (one owner). */
ROOM_OUTBOX_EXPORT void room_outbox_error_free(room_outbox_error *err);

/* --- process-wide setup ------------------------------------------------------------------- */

/* The C libraries' process-wide init (mysql_library_init, curl_global_init), which must happen
 * before the first hook is created: call it once in main() before starting threads, unless the
 * host calls those two itself. A second call returns the first call's status and does nothing.
 * Any thread (serialised inside), but before any hook exists. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_library_init(room_outbox_error **err);
/* The matching cleanups (curl_global_cleanup, mysql_library_end), after the last hook was
 * destroyed; optional at process exit. Does nothing without a successful init. Any thread, but
 * after every hook is destroyed. */
ROOM_OUTBOX_EXPORT void room_outbox_library_cleanup(void);

/* --- options ------------------------------------------------------------------------------ */

typedef struct room_outbox_options room_outbox_options;

/* New options holding the defaults of HookOptions (hook.h). NULL when out of memory. Any
 * thread. */
ROOM_OUTBOX_EXPORT room_outbox_options *room_outbox_options_new(void);
/* Frees `opts`; NULL does nothing. A hook made from it is unaffected. Not concurrently on one
 * options object. */
ROOM_OUTBOX_EXPORT void room_outbox_options_destroy(room_outbox_options *opts);

/* Replaces every option with what the TOML file at (path, path_len) says, exactly as
 * room_outbox::LoadHookOptions reads it: top-level node_id, [mysql], [tencent_im], [hook],
 * [wake] socket, [outbox_worker] ordering; the secrets from mysql.password_file /
 * ROOM_OUTBOX_MYSQL_PASSWORD and tencent_im.secret_key_file / ROOM_OUTBOX_TIM_SECRET_KEY. The
 * relay's own keys are accepted and ignored. On failure `opts` is unchanged and the error names
 * the file, line, column and key ("relay.toml:4:8: mysql.port: must be 1..65535, got 0");
 * ROOM_OUTBOX_NOT_FOUND for an unreadable file, ROOM_OUTBOX_INVALID_ARGUMENT for a bad value.
 * Not concurrently on one options object. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_options_load_file(room_outbox_options *opts,
                                                                    const char *path,
                                                                    size_t path_len,
                                                                    room_outbox_error **err);

/* Sets one option by its relay.toml name, "section.key" (or a top-level key: "node_id"), with the
 * same validation as in the file; a later set or load_file overrides it. `value` is the text of
 * the value: a string as it is ("127.0.0.1", "500ms", "inline"); a number, boolean or array in
 * TOML syntax ("3306", "[\"RoomCreated\", \"RoomHeatChanged\"]"). Two more keys hold secrets
 * given from memory: "mysql.password" and "tencent_im.secret_key" (never logged, never in an
 * error text). A *_file key reads its file at once (relative paths: against
 * $CREDENTIALS_DIRECTORY, else the directory of the last file loaded, else the working
 * directory), and the environment variable of that secret wins as in the file. Errors:
 * ROOM_OUTBOX_INVALID_ARGUMENT naming the key ("mysql.port: must be 1..65535, got 0", "unknown
 * key mysql.prot"), ROOM_OUTBOX_NOT_FOUND for an unreadable secret file; `opts` is then
 * unchanged. Not concurrently on one options object. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_options_set(room_outbox_options *opts,
                                                              const char *key, const char *value,
                                                              size_t value_len,
                                                              room_outbox_error **err);

/* Levels of the log callback. */
#define ROOM_OUTBOX_LOG_DEBUG 0
#define ROOM_OUTBOX_LOG_INFO 1
#define ROOM_OUTBOX_LOG_WARN 2
#define ROOM_OUTBOX_LOG_ERROR 3

/* One log line of the hook: `level` is a ROOM_OUTBOX_LOG_* value, (message, message_len) is
 * valid during the call only. Called on the thread that runs room_outbox_hook_new (its
 * configuration warnings) and room_outbox_hook_commit and, with [hook] sync_publish =
 * "background", also on the hook's own publishing thread: it must be safe to call from another
 * thread than the caller's. It must not call back into the hook. */
typedef void (*room_outbox_log_fn)(void *user_data, int32_t level, const char *message,
                                   size_t message_len);

/* Gives the hooks made from `opts` a log callback (NULL: the hook logs nothing, the default).
 * `user_data` is passed back as it is and must stay valid until every hook made from these
 * options is destroyed. Not concurrently on one options object. */
ROOM_OUTBOX_EXPORT void room_outbox_options_set_log(room_outbox_options *opts,
                                                    room_outbox_log_fn log, void *user_data);

/* --- the hook ----------------------------------------------------------------------------- */

typedef struct room_outbox_hook room_outbox_hook;

/* Connects to the database and prepares the IM publisher from a copy of `opts` (the caller
 * destroys `opts` whenever it likes). On success stores the new hook in *hook; on failure
 * stores NULL and returns why (a connection or configuration problem, never a secret). A hook
 * whose hook.sync_publish is "inline" or "background" needs tencent_im.sdk_app_id,
 * admin_identifier and the secret key (ROOM_OUTBOX_INVALID_ARGUMENT naming the one missing);
 * with "off" it sends nothing to IM and needs none of them.
 * room_outbox_library_init must have run. Any thread (each call makes its own hook).
 * Before it connects it logs, through the options' log callback at ROOM_OUTBOX_LOG_WARN, one
 * line "configuration warning: ..." for each secret file of `opts` (loaded or set by a *_file
 * key) that its group or other users may read, and one when the database link is TCP to a host
 * that is not loopback with an ssl_mode that does not verify the server. Each hook made logs
 * them. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_hook_new(const room_outbox_options *opts,
                                                           room_outbox_hook **hook,
                                                           room_outbox_error **err);

/* Closes the hook's connections; with sync_publish = "background" first publishes or releases
 * what is queued (at most sync_publish_timeout). NULL does nothing. Not concurrently on one
 * hook. */
ROOM_OUTBOX_EXPORT void room_outbox_hook_destroy(room_outbox_hook *hook);

/* --- a command and its events ------------------------------------------------------------- */

typedef struct room_outbox_command room_outbox_command;

/* An empty command: every text "" but payload "{}", room_seq 0, no events. NULL when out of
 * memory. Any thread. */
ROOM_OUTBOX_EXPORT room_outbox_command *room_outbox_command_new(void);
/* Frees `cmd`; NULL does nothing. Not concurrently on one command. */
ROOM_OUTBOX_EXPORT void room_outbox_command_destroy(room_outbox_command *cmd);

/* Sets a text field of the command: "command_id" (the idempotency key), "room_id",
 * "command_type", "request_id" (tracing only) or "payload" (JSON object text, stored in the
 * command log). ROOM_OUTBOX_INVALID_ARGUMENT for another name. The values themselves are checked
 * at commit. Not concurrently on one command. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_command_set_text(room_outbox_command *cmd,
                                                                   const char *field,
                                                                   const char *value,
                                                                   size_t value_len,
                                                                   room_outbox_error **err);
/* Sets an integer field of the command: "room_seq" (the room's version after the command).
 * Not concurrently on one command. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_command_set_int(room_outbox_command *cmd,
                                                                  const char *field,
                                                                  int64_t value,
                                                                  room_outbox_error **err);

/* Appends an event: its event_id (unique; clients dedupe by it), event_type, room_seq and
 * payload (JSON object text); occurred_at_ms 0 (the commit time). Events are numbered from 0 in
 * the order added; the result reports them in the same order. Not concurrently on one
 * command. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_command_add_event(
    room_outbox_command *cmd, const char *event_id, size_t event_id_len, const char *event_type,
    size_t event_type_len, int64_t room_seq, const char *payload, size_t payload_len,
    room_outbox_error **err);
/* Sets an integer field of event `index`: "occurred_at_ms" (Unix epoch ms; 0: the commit time)
 * or "room_seq". ROOM_OUTBOX_INVALID_ARGUMENT for an index past the last event or another name.
 * Not concurrently on one command. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_command_set_event_int(room_outbox_command *cmd,
                                                                        size_t index,
                                                                        const char *field,
                                                                        int64_t value,
                                                                        room_outbox_error **err);

/* --- the caller's statements -------------------------------------------------------------- */

typedef struct room_outbox_tx room_outbox_tx;
typedef struct room_outbox_params room_outbox_params;

/* The caller's statements (e.g. the room snapshot), run inside the commit's transaction on the
 * thread that called room_outbox_hook_commit, before it returns. Return ROOM_OUTBOX_OK to go on
 * to COMMIT; any other status rolls the whole command back (room_outbox_hook_commit then fails
 * with the error of the statement that failed, or with that status). It may run TWICE for one
 * commit: when the connection failed before COMMIT was sent, the server rolled the first run back
 * and the hook runs the command again on a new connection. `tx` is valid only during the call.
 * It must not end the transaction: room_outbox_tx_execute refuses COMMIT, ROLLBACK, BEGIN, DDL,
 * SET autocommit and the other statements that commit implicitly (ROOM_OUTBOX_INVALID_ARGUMENT,
 * "caller statement refused"), and a room_outbox_hook_commit on the same hook from inside the
 * callback is refused the same way ("already running on this Hook"). */
typedef room_outbox_status (*room_outbox_statements_fn)(room_outbox_tx *tx, void *user_data);

/* Runs one statement with `?` placeholders as a prepared statement in the commit's transaction;
 * `params` (NULL: none) supplies their values in order. A SELECT's rows are read and dropped. A
 * failure (e.g. a syntax error, a duplicate key) makes the whole commit roll back: return its
 * status from the callback. Only inside the callback. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_tx_execute(room_outbox_tx *tx, const char *sql,
                                                             size_t sql_len,
                                                             const room_outbox_params *params,
                                                             room_outbox_error **err);

/* room_outbox_tx_execute that also tells how many rows the statement matched: on success
 * *affected_rows (when not NULL) gets, for an UPDATE, the rows its WHERE found whether or not
 * their values changed (the hook connects with CLIENT_FOUND_ROWS: "found rows", not "changed
 * rows"); for DELETE the rows deleted; for INSERT the rows inserted (INSERT ... ON DUPLICATE KEY
 * UPDATE: 1 per new row, 2 per updated row, 1 per row found already equal); for REPLACE deleted
 * + inserted; for a SELECT the rows it returned. On failure it gets 0. The optimistic check
 * "UPDATE room_snapshot SET ... WHERE room_id = ? AND room_seq = ?" reads 1 when the room was at
 * the expected version and 0 when another command got there first: return a status other than
 * ROOM_OUTBOX_OK from the callback then, and the command rolls back. Only inside the callback.
 * Since ROOM_OUTBOX_C_VERSION 0x01010000. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_tx_execute_affected(
    room_outbox_tx *tx, const char *sql, size_t sql_len, const room_outbox_params *params,
    uint64_t *affected_rows, room_outbox_error **err);

/* A list of statement parameters. NULL when out of memory. Any thread. */
ROOM_OUTBOX_EXPORT room_outbox_params *room_outbox_params_new(void);
/* Frees `params`; NULL does nothing. Not concurrently on one params object. */
ROOM_OUTBOX_EXPORT void room_outbox_params_destroy(room_outbox_params *params);
/* Empties the list for reuse. Not concurrently on one params object. */
ROOM_OUTBOX_EXPORT void room_outbox_params_clear(room_outbox_params *params);
/* Appends one value: SQL NULL, a 64-bit integer, a double or a text (copied). Each returns
 * ROOM_OUTBOX_OK, or ROOM_OUTBOX_NO_MEMORY / ROOM_OUTBOX_INVALID_ARGUMENT (NULL params). Not
 * concurrently on one params object. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_params_add_null(room_outbox_params *params);
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_params_add_int(room_outbox_params *params,
                                                                 int64_t value);
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_params_add_double(room_outbox_params *params,
                                                                    double value);
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_params_add_text(room_outbox_params *params,
                                                                  const char *value,
                                                                  size_t value_len);

/* --- commit ------------------------------------------------------------------------------- */

typedef struct room_outbox_result room_outbox_result;

/* room_outbox_result_status */
#define ROOM_OUTBOX_COMMITTED 0 /* command log and outbox rows are durable, whatever IM did */
#define ROOM_OUTBOX_DUPLICATE 1 /* command_id was committed before: nothing written or sent */
#define ROOM_OUTBOX_FAILED 2    /* rolled back; nothing was published */
/* COMMIT was sent, its answer was lost and the lookup that would tell failed too: the command
 * may have committed. Do not apply it yet; commit again with the same command_id: DUPLICATE
 * means it had committed, COMMITTED that it had not (and now has). */
#define ROOM_OUTBOX_UNKNOWN 3

/* room_outbox_result_event_state */
#define ROOM_OUTBOX_PUBLISHED 0 /* the sync publish delivered it (the mark is best effort) */
#define ROOM_OUTBOX_SKIPPED 1   /* a type never sent to IM (skip_event_types): written published */
#define ROOM_OUTBOX_PENDING 2   /* left for outbox-relay; the event's error says why */
#define ROOM_OUTBOX_QUEUED 3    /* sync_publish = "background": handed to the hook's thread */

/* Commits `cmd` and its events with the caller's statements (`statements`, NULL: none; it gets
 * `user_data`) in one transaction, then makes the sync publish; see room_outbox/hook.h. Stores a
 * new result in *result whenever the commit ran (the caller destroys it with
 * room_outbox_result_destroy), NULL when the arguments were refused. Returns ROOM_OUTBOX_OK when
 * the result is COMMITTED or DUPLICATE; for FAILED and UNKNOWN returns the error's code (also in
 * *err and in the result). A committed command is reported committed whatever IM did. Not
 * concurrently on one hook. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_hook_commit(room_outbox_hook *hook,
                                                              const room_outbox_command *cmd,
                                                              room_outbox_statements_fn statements,
                                                              void *user_data,
                                                              room_outbox_result **result,
                                                              room_outbox_error **err);

/* Frees `result`; NULL does nothing. Not concurrently on one result. */
ROOM_OUTBOX_EXPORT void room_outbox_result_destroy(room_outbox_result *result);
/* ROOM_OUTBOX_COMMITTED, _DUPLICATE, _FAILED or _UNKNOWN (_FAILED for NULL). Any thread. */
ROOM_OUTBOX_EXPORT int32_t room_outbox_result_status(const room_outbox_result *result);
/* For FAILED and UNKNOWN: the error (borrowed from `result`); NULL otherwise. Any thread. */
ROOM_OUTBOX_EXPORT const room_outbox_error *room_outbox_result_error(
    const room_outbox_result *result);
/* The number of events reported: every event of the command when COMMITTED, else 0. Any
 * thread. */
ROOM_OUTBOX_EXPORT size_t room_outbox_result_event_count(const room_outbox_result *result);
/* Event `index`'s state (ROOM_OUTBOX_PUBLISHED, _SKIPPED, _PENDING, _QUEUED); -1 for an index
 * out of range. Any thread. */
ROOM_OUTBOX_EXPORT int32_t room_outbox_result_event_state(const room_outbox_result *result,
                                                          size_t index);
/* Event `index`'s event_id, NUL-terminated and borrowed from `result`; *len (when not NULL) gets
 * its length. NULL for an index out of range. Any thread. */
ROOM_OUTBOX_EXPORT const char *room_outbox_result_event_id(const room_outbox_result *result,
                                                           size_t index, size_t *len);
/* Why event `index` was left pending (short, secret-free; "" unless PENDING), as above. Any
 * thread. */
ROOM_OUTBOX_EXPORT const char *room_outbox_result_event_error(const room_outbox_result *result,
                                                              size_t index, size_t *len);

/* --- metrics (room_outbox/hook_metrics.h; docs/hook.md, "Metrics") ------------------------- */

/* What one hook counted since room_outbox_hook_new: the fields of the C++ HookMetrics without
 * the histogram's buckets. Fields are only ever appended. */
typedef struct room_outbox_hook_metrics {
  uint64_t commits_committed; /* commits by outcome */
  uint64_t commits_duplicate;
  uint64_t commits_failed;
  uint64_t commits_unknown;
  uint64_t sync_published; /* IM requests of the sync publish by outcome */
  uint64_t sync_failed;
  uint64_t sync_timeout;
  uint64_t sync_rate_limited;
  uint64_t sync_skipped_sync_off; /* pending events the sync publish did not try, by reason */
  uint64_t sync_skipped_breaker_open;
  uint64_t sync_skipped_queue_full;
  uint64_t sync_skipped_room_order;
  uint64_t sync_skipped_out_of_time;
  uint64_t sync_skipped_command_failed;
  uint64_t rows_left_to_relay;     /* committed pending rows left for outbox-relay */
  uint64_t commit_duration_count;  /* commits timed */
  uint64_t commit_duration_sum_us; /* their total time in microseconds */
  int32_t sync_breaker_open;       /* 1 while the sync breaker is open or half-open */
  /* Pending events the sync publish did not try because their room is backed off after IM's
   * frequency control refused it. */
  uint64_t sync_skipped_room_refused;
  /* Marks published that failed after IM took the rows: waiting to be written now, written late
   * since, dropped at the bound of 10,000 (those rows may be sent again). */
  uint64_t late_marks_waiting;
  uint64_t late_marks_written;
  uint64_t late_marks_dropped;
  /* Events of committed commands written pending (to be sent to IM), and events IM accepted
   * from the sync publish (a pack counts its events). */
  uint64_t events_committed;
  uint64_t publish_success;
} room_outbox_hook_metrics;

/* Fills *out with `hook`'s counts. `out_size` is sizeof(room_outbox_hook_metrics) as the caller
 * was compiled with: a library with more fields fills only those the caller knows, one with fewer
 * zeroes the rest. Any thread, also while a commit runs on `hook` (never waits for it); `hook`
 * must stay alive during the call. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_hook_metrics_get(const room_outbox_hook *hook,
                                                                   room_outbox_hook_metrics *out,
                                                                   size_t out_size,
                                                                   room_outbox_error **err);

/* The Prometheus text (format 0.0.4) of the `count` hooks' metrics summed (e.g. a pool serving
 * one room service), every sample labelled hook="<hook_label>" unless (hook_label,
 * hook_label_len) is empty. *len gets the text's length without the NUL. When cap > 0, writes
 * min(*len, cap - 1) bytes and a NUL into buf; *len >= cap means it was cut: call again with
 * cap > *len (the counts may have grown meanwhile, so check again). cap 0 (buf may be NULL) only
 * measures. Serve the text of all the process's hooks from one call: two texts concatenated
 * repeat each family, which Prometheus refuses. Any thread, as room_outbox_hook_metrics_get. */
ROOM_OUTBOX_EXPORT room_outbox_status room_outbox_hook_metrics_text(
    const room_outbox_hook *const *hooks, size_t count, const char *hook_label,
    size_t hook_label_len, char *buf, size_t cap, size_t *len, room_outbox_error **err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* ROOM_OUTBOX_C_H_ */
