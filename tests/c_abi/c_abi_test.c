/* The C ABI (room_outbox/c.h) as a C room service uses it: built with
 * gcc -std=c99 -Wall -Wextra -pedantic -Werror against the INSTALLED headers and library through
 * pkg-config, run against the private MariaDB and two fake IM servers (one up, one down) by
 * tests/c_abi/run-c-abi-test.sh. Covers every function of c.h. Checks the database with its own
 * Connector/C connection.
 *
 *   c_abi_test UP_CONFIG DOWN_CONFIG MYSQL_SOCKET DATABASE SCRATCH_DIR
 *
 * Prints one line per check group and "N passed, M failed"; exits 0 only when nothing failed. */
#include <mysql.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "room_outbox/c.h"

static int passed;
static int failed;

static void Check(int ok, const char *what, int line) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    fprintf(stderr, "c_abi_test:%d: FAILED: %s\n", line, what);
  }
}
#define CHECK(cond) Check((cond) ? 1 : 0, #cond, __LINE__)

static MYSQL *db;

/* The first column of the first row of `sql` as an integer; -1 when the query fails or is
 * empty. */
static long long Scalar(const char *sql) {
  MYSQL_RES *res;
  MYSQL_ROW row;
  long long value = -1;
  if (mysql_query(db, sql) != 0) {
    fprintf(stderr, "c_abi_test: %s: %s\n", sql, mysql_error(db));
    return -1;
  }
  res = mysql_store_result(db);
  if (res == NULL) {
    return -1;
  }
  row = mysql_fetch_row(res);
  if (row != NULL && row[0] != NULL) {
    value = atoll(row[0]);
  }
  mysql_free_result(res);
  return value;
}

static long long Count(const char *format, const char *arg) {
  char sql[512];
  snprintf(sql, sizeof sql, format, arg);
  return Scalar(sql);
}

/* Frees the error and reports whether it had `code` and its message contained `needle`. */
static int ErrorIs(room_outbox_error *err, room_outbox_status code, const char *needle) {
  int ok = err != NULL && room_outbox_error_code(err) == code &&
           strstr(room_outbox_error_message(err), needle) != NULL;
  printf("c_abi_test:   %s: %s\n", room_outbox_status_name(room_outbox_error_code(err)),
         room_outbox_error_message(err));
  room_outbox_error_free(err);
  return ok;
}

static room_outbox_status SetText(room_outbox_command *cmd, const char *field, const char *value) {
  return room_outbox_command_set_text(cmd, field, value, strlen(value), NULL);
}

/* A command with one event sent to IM and one type that never is (RoomHeatChanged). */
static room_outbox_command *NewCommand(const char *command_id, const char *room_id) {
  room_outbox_command *cmd = room_outbox_command_new();
  char event_id[160];
  const char *gift = "{\"user_id\":\"u1\",\"gift\":\"rose\"}";
  const char *heat = "{\"heat\":130}";
  CHECK(cmd != NULL);
  CHECK(SetText(cmd, "command_id", command_id) == ROOM_OUTBOX_OK);
  CHECK(SetText(cmd, "room_id", room_id) == ROOM_OUTBOX_OK);
  CHECK(SetText(cmd, "command_type", "SendGift") == ROOM_OUTBOX_OK);
  CHECK(SetText(cmd, "request_id", "req-c") == ROOM_OUTBOX_OK);
  CHECK(SetText(cmd, "payload", gift) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_command_set_int(cmd, "room_seq", 12, NULL) == ROOM_OUTBOX_OK);
  snprintf(event_id, sizeof event_id, "%s-gift", command_id);
  CHECK(room_outbox_command_add_event(cmd, event_id, strlen(event_id), "RoomGiftSent", 12, 12,
                                      gift, strlen(gift), NULL) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_command_set_event_int(cmd, 0, "occurred_at_ms", 1700000000123LL, NULL) ==
        ROOM_OUTBOX_OK);
  snprintf(event_id, sizeof event_id, "%s-heat", command_id);
  CHECK(room_outbox_command_add_event(cmd, event_id, strlen(event_id), "RoomHeatChanged", 15, 12,
                                      heat, strlen(heat), NULL) == ROOM_OUTBOX_OK);
  return cmd;
}

/* The statements callback: the room snapshot, written in the commit's transaction with a
 * parameter of each kind. user_data is the room id. */
static room_outbox_status WriteSnapshot(room_outbox_tx *tx, void *user_data) {
  const char *room_id = (const char *)user_data;
  const char *sql =
      "INSERT INTO c_snapshot (room_id, room_seq, heat, note) VALUES (?, ?, ?, ?) "
      "ON DUPLICATE KEY UPDATE room_seq = VALUES(room_seq)";
  room_outbox_params *params = room_outbox_params_new();
  room_outbox_status status;
  if (params == NULL) {
    return ROOM_OUTBOX_NO_MEMORY;
  }
  room_outbox_params_add_text(params, "ignored", 7);
  room_outbox_params_clear(params);
  room_outbox_params_add_text(params, room_id, strlen(room_id));
  room_outbox_params_add_int(params, 12);
  room_outbox_params_add_double(params, 130.5);
  room_outbox_params_add_null(params);
  status = room_outbox_tx_execute(tx, sql, strlen(sql), params, NULL);
  room_outbox_params_destroy(params);
  return status;
}

/* A caller statement that fails: the table does not exist. */
static room_outbox_status FailingStatement(room_outbox_tx *tx, void *user_data) {
  const char *sql = "UPDATE no_such_table SET x = 1";
  room_outbox_error *err = NULL;
  room_outbox_status status = room_outbox_tx_execute(tx, sql, strlen(sql), NULL, &err);
  (void)user_data;
  CHECK(status != ROOM_OUTBOX_OK);
  CHECK(ErrorIs(err, status, "no_such_table"));
  return status;
}

/* Commits from inside the callback on the same hook (user_data): refused, the outer commit
 * goes on. Also runs a COMMIT, which is refused too. */
static room_outbox_status NestedCommit(room_outbox_tx *tx, void *user_data) {
  room_outbox_hook *hook = (room_outbox_hook *)user_data;
  room_outbox_command *inner = NewCommand("c-cmd-inner", "c-room-nested");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  const char *commit = "COMMIT";
  CHECK(room_outbox_hook_commit(hook, inner, NULL, NULL, &result, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "already running on this Hook"));
  room_outbox_result_destroy(result);
  err = NULL;
  room_outbox_command_destroy(inner);
  CHECK(room_outbox_tx_execute(tx, commit, strlen(commit), NULL, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "caller statement refused"));
  return ROOM_OUTBOX_OK;
}

/* Gives up without running a statement. */
static room_outbox_status Refuse(room_outbox_tx *tx, void *user_data) {
  (void)tx;
  (void)user_data;
  return ROOM_OUTBOX_ABORTED;
}

/* The optimistic check of a room snapshot: moves c-room-up from `expected` to expected + 1 and
 * gives up (ROOM_OUTBOX_ABORTED) when the UPDATE matched no row. */
struct Advance {
  int64_t expected;
  uint64_t matched;
};

static room_outbox_status AdvanceSnapshot(room_outbox_tx *tx, void *user_data) {
  struct Advance *advance = (struct Advance *)user_data;
  const char *sql = "UPDATE c_snapshot SET room_seq = ? WHERE room_id = ? AND room_seq = ?";
  room_outbox_params *params = room_outbox_params_new();
  room_outbox_status status;
  if (params == NULL) {
    return ROOM_OUTBOX_NO_MEMORY;
  }
  room_outbox_params_add_int(params, advance->expected + 1);
  room_outbox_params_add_text(params, "c-room-up", 9);
  room_outbox_params_add_int(params, advance->expected);
  advance->matched = 99;
  status = room_outbox_tx_execute_affected(tx, sql, strlen(sql), params, &advance->matched, NULL);
  room_outbox_params_destroy(params);
  if (status != ROOM_OUTBOX_OK) {
    return status;
  }
  return advance->matched == 1 ? ROOM_OUTBOX_OK : ROOM_OUTBOX_ABORTED;
}

static int log_lines;
static char last_log[512];

static void Log(void *user_data, int32_t level, const char *message, size_t len) {
  (void)user_data;
  (void)level;
  ++log_lines;
  snprintf(last_log, sizeof last_log, "%.*s", (int)len, message);
}

/* The IM secret key the harness wrote to SCRATCH_DIR/tim-secret-key (one line). */
static const char *ReadSecretKey(const char *scratch, char *out, size_t size) {
  char path[512];
  FILE *in;
  snprintf(path, sizeof path, "%s/tim-secret-key", scratch);
  in = fopen(path, "r");
  out[0] = '\0';
  if (in != NULL) {
    if (fgets(out, (int)size, in) == NULL) {
      out[0] = '\0';
    }
    fclose(in);
  }
  out[strcspn(out, "\r\n")] = '\0';
  CHECK(out[0] != '\0');
  return out;
}

static void TestVersionAndStatuses(void) {
  CHECK(room_outbox_c_version() == ROOM_OUTBOX_C_VERSION);
  CHECK(strcmp(room_outbox_status_name(ROOM_OUTBOX_OK), "ok") == 0);
  CHECK(strcmp(room_outbox_status_name(ROOM_OUTBOX_UNAVAILABLE), "unavailable") == 0);
  CHECK(strcmp(room_outbox_status_name(ROOM_OUTBOX_NO_MEMORY), "no_memory") == 0);
  CHECK(strcmp(room_outbox_status_name(99), "unknown") == 0);
  CHECK(room_outbox_error_code(NULL) == ROOM_OUTBOX_INTERNAL);
  CHECK(strcmp(room_outbox_error_message(NULL), "") == 0);
  CHECK(room_outbox_error_retryable(NULL) == 0);
  room_outbox_error_free(NULL);
  printf("c_abi_test: version 0x%08x, statuses: ok\n", (unsigned)room_outbox_c_version());
}

/* A bad option fails at once with a clear text naming the key; the options stay usable. */
static void TestBadOptions(const char *scratch) {
  room_outbox_options *opts = room_outbox_options_new();
  room_outbox_error *err = NULL;
  room_outbox_hook *hook = NULL;
  char path[512];
  FILE *bad;
  CHECK(opts != NULL);
  CHECK(room_outbox_options_set(opts, "mysql.port", "0", 1, &err) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "mysql.port: must be 1..65535, got 0"));
  CHECK(room_outbox_options_set(opts, "mysql.prot", "1", 1, &err) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "unknown key 'mysql.prot'"));
  CHECK(room_outbox_options_set(opts, "tencent_im.sdk_app_id", "many", 4, &err) != ROOM_OUTBOX_OK);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "tencent_im.sdk_app_id: expected an integer"));
  CHECK(room_outbox_options_set(opts, "hook.sync_publish", "sometimes", 9, &err) != ROOM_OUTBOX_OK);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "hook.sync_publish: unknown value"));
  CHECK(room_outbox_options_set(opts, "tencent_im.pack_max_events", "101", 3, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "tencent_im.pack_max_events: must be 1..100, got 101"));
  CHECK(room_outbox_options_set(opts, "tencent_im.pack_max_events", "3", 1, &err) == ROOM_OUTBOX_OK);
  CHECK(err == NULL);
  CHECK(room_outbox_options_set(opts, "log.level", "debug", 5, &err) != ROOM_OUTBOX_OK);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "log"));
  CHECK(room_outbox_options_set(NULL, "mysql.port", "1", 1, NULL) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(room_outbox_options_set(opts, "mysql.user", NULL, 3, NULL) == ROOM_OUTBOX_INVALID_ARGUMENT);
  /* A value that is TOML of the wrong type is taken as the string: a user named 123. */
  CHECK(room_outbox_options_set(opts, "mysql.user", "123", 3, &err) == ROOM_OUTBOX_OK);
  CHECK(err == NULL);

  snprintf(path, sizeof path, "%s/no-such-relay.toml", scratch);
  CHECK(room_outbox_options_load_file(opts, path, strlen(path), &err) == ROOM_OUTBOX_NOT_FOUND);
  CHECK(ErrorIs(err, ROOM_OUTBOX_NOT_FOUND, "no-such-relay.toml"));
  snprintf(path, sizeof path, "%s/bad-relay.toml", scratch);
  bad = fopen(path, "w");
  CHECK(bad != NULL);
  if (bad != NULL) {
    fputs("[mysql]\nsocket = \"/tmp/x.sock\"\n[hook]\nsync_publish_timeout = \"soon\"\n", bad);
    fclose(bad);
  }
  CHECK(room_outbox_options_load_file(opts, path, strlen(path), &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "bad-relay.toml:4:24: hook.sync_publish_timeout"));

  /* The options are still usable: a hook on a socket with no server says which socket. */
  snprintf(path, sizeof path, "%s/no-such-mysqld.sock", scratch);
  CHECK(room_outbox_options_set(opts, "mysql.socket", path, strlen(path), NULL) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "mysql.connect_timeout", "2s", 2, NULL) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "tencent_im.sdk_app_id", "1400000000", 10, NULL) ==
        ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "tencent_im.secret_key", "k", 1, NULL) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_hook_new(opts, &hook, &err) != ROOM_OUTBOX_OK);
  CHECK(hook == NULL);
  CHECK(room_outbox_error_retryable(err) == 1);
  CHECK(ErrorIs(err, ROOM_OUTBOX_UNAVAILABLE, "no-such-mysqld.sock"));
  room_outbox_options_destroy(opts);
  room_outbox_options_destroy(NULL);
  printf("c_abi_test: bad options: ok\n");
}

/* A hook from the config file; `secret_key`, when not NULL, is given from memory. */
static room_outbox_hook *NewHook(const char *config, const char *secret_key) {
  room_outbox_options *opts = room_outbox_options_new();
  room_outbox_hook *hook = NULL;
  room_outbox_error *err = NULL;
  CHECK(room_outbox_options_load_file(opts, config, strlen(config), &err) == ROOM_OUTBOX_OK);
  CHECK(err == NULL);
  if (secret_key != NULL) {
    CHECK(room_outbox_options_set(opts, "tencent_im.secret_key", secret_key, strlen(secret_key),
                                  NULL) == ROOM_OUTBOX_OK);
  }
  CHECK(room_outbox_options_set(opts, "hook.sync_publish_timeout", "3s", 2, NULL) ==
        ROOM_OUTBOX_OK);
  room_outbox_options_set_log(opts, Log, NULL);
  CHECK(room_outbox_hook_new(opts, &hook, &err) == ROOM_OUTBOX_OK);
  if (err != NULL) {
    fprintf(stderr, "c_abi_test: hook_new: %s\n", room_outbox_error_message(err));
    room_outbox_error_free(err);
  }
  room_outbox_options_destroy(opts); /* the hook keeps its own copy */
  return hook;
}

static int warning_lines;

/* Counts the warnings about a secret file others may read. */
static void LogWarnings(void *user_data, int32_t level, const char *message, size_t len) {
  char line[1024];
  (void)user_data;
  snprintf(line, sizeof line, "%.*s", (int)len, message);
  if (level == ROOM_OUTBOX_LOG_WARN && strstr(line, "configuration warning: ") == line &&
      strstr(line, "mysql.password_file: ") != NULL &&
      strstr(line, "is readable by its group or other users (mode 640)") != NULL) {
    ++warning_lines;
  }
}

/* The warnings of the options' files reach the log callback when a hook is made, from a loaded
 * file and from a *_file key set later (the harness wrote SCRATCH_DIR/group-readable-password,
 * mode 0640, and owner-only-password, 0600). */
static void TestConfigWarningsReachTheLog(const char *up_config, const char *scratch) {
  room_outbox_options *opts = room_outbox_options_new();
  room_outbox_hook *hook = NULL;
  room_outbox_error *err = NULL;
  char path[512];
  FILE *file;
  /* A loaded file: the warning comes before the hook is made, which fails here (no IM app and
   * no database server). */
  snprintf(path, sizeof path, "%s/warning-relay.toml", scratch);
  file = fopen(path, "w");
  CHECK(file != NULL);
  if (file != NULL) {
    fprintf(file, "[mysql]\nsocket = \"%s/no-such-mysqld.sock\"\n"
                  "password_file = \"group-readable-password\"\n", scratch);
    fclose(file);
  }
  CHECK(room_outbox_options_load_file(opts, path, strlen(path), &err) == ROOM_OUTBOX_OK);
  room_outbox_options_set_log(opts, LogWarnings, NULL);
  warning_lines = 0;
  CHECK(room_outbox_hook_new(opts, &hook, &err) != ROOM_OUTBOX_OK);
  CHECK(hook == NULL);
  CHECK(warning_lines == 1);
  room_outbox_error_free(err);
  err = NULL;
  room_outbox_options_destroy(opts);

  /* A key set later, on options that make a working hook; a better file drops the warning. */
  opts = room_outbox_options_new();
  CHECK(room_outbox_options_load_file(opts, up_config, strlen(up_config), &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "tencent_im.secret_key", "k", 1, NULL) == ROOM_OUTBOX_OK);
  snprintf(path, sizeof path, "%s/group-readable-password", scratch);
  CHECK(room_outbox_options_set(opts, "mysql.password_file", path, strlen(path), &err) ==
        ROOM_OUTBOX_OK);
  room_outbox_options_set_log(opts, LogWarnings, NULL);
  warning_lines = 0;
  CHECK(room_outbox_hook_new(opts, &hook, &err) == ROOM_OUTBOX_OK);
  CHECK(warning_lines == 1);
  room_outbox_hook_destroy(hook);
  hook = NULL;
  snprintf(path, sizeof path, "%s/owner-only-password", scratch);
  CHECK(room_outbox_options_set(opts, "mysql.password_file", path, strlen(path), &err) ==
        ROOM_OUTBOX_OK);
  warning_lines = 0;
  CHECK(room_outbox_hook_new(opts, &hook, &err) == ROOM_OUTBOX_OK);
  CHECK(warning_lines == 0);
  room_outbox_hook_destroy(hook);
  room_outbox_options_destroy(opts);
  printf("c_abi_test: configuration warnings: ok\n");
}

/* IM up: the event sent to IM is published by the sync publish, the other one skipped. */
static void TestImUp(room_outbox_hook *hook) {
  room_outbox_command *cmd = NewCommand("c-cmd-up", "c-room-up");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  size_t len = 0;
  CHECK(room_outbox_hook_commit(hook, cmd, WriteSnapshot, (void *)"c-room-up", &result, &err) ==
        ROOM_OUTBOX_OK);
  CHECK(err == NULL);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_COMMITTED);
  CHECK(room_outbox_result_error(result) == NULL);
  CHECK(room_outbox_result_event_count(result) == 2);
  CHECK(room_outbox_result_event_state(result, 0) == ROOM_OUTBOX_PUBLISHED);
  CHECK(room_outbox_result_event_state(result, 1) == ROOM_OUTBOX_SKIPPED);
  CHECK(room_outbox_result_event_state(result, 2) == -1);
  CHECK(strcmp(room_outbox_result_event_id(result, 0, &len), "c-cmd-up-gift") == 0);
  CHECK(len == strlen("c-cmd-up-gift"));
  CHECK(strcmp(room_outbox_result_event_error(result, 0, NULL), "") == 0);
  CHECK(room_outbox_result_event_id(result, 2, NULL) == NULL);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE command_id = '%s' AND status = 'published'",
              "c-cmd-up") == 2);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-up") == 1);
  CHECK(Count("SELECT room_seq FROM c_snapshot WHERE room_id = '%s'", "c-room-up") == 12);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE event_id = '%s' AND "
              "envelope LIKE '%%\"occurred_at_ms\":1700000000123%%'",
              "c-cmd-up-gift") == 1);
  printf("c_abi_test: IM up: committed, %s published, %s skipped\n",
         room_outbox_result_event_id(result, 0, NULL), room_outbox_result_event_id(result, 1, NULL));
  room_outbox_result_destroy(result);
  room_outbox_result_destroy(NULL);

  /* The same command_id again: a duplicate, nothing written. */
  log_lines = 0;
  CHECK(room_outbox_hook_commit(hook, cmd, WriteSnapshot, (void *)"c-room-up", &result, &err) ==
        ROOM_OUTBOX_OK);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_DUPLICATE);
  CHECK(room_outbox_result_event_count(result) == 0);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE command_id = '%s'", "c-cmd-up") == 2);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-up") == 1);
  CHECK(log_lines == 1 && strstr(last_log, "duplicate") != NULL);
  printf("c_abi_test: repeated command_id: duplicate, nothing written; log: %s\n", last_log);
  room_outbox_result_destroy(result);
  room_outbox_command_destroy(cmd);
}

/* A hook that never sends (hook.sync_publish "off") starts without the IM app's credentials and
 * leaves its events pending for the relay; with a sync publish the same options are refused,
 * naming the first credential missing. */
static void TestNoImCredentialsWhenOff(const char *up_config) {
  room_outbox_options *opts = room_outbox_options_new();
  room_outbox_hook *hook = NULL;
  room_outbox_error *err = NULL;
  room_outbox_command *cmd = NewCommand("c-cmd-nokey", "c-room-nokey");
  room_outbox_result *result = NULL;
  CHECK(room_outbox_options_load_file(opts, up_config, strlen(up_config), &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "tencent_im.sdk_app_id", "0", 1, &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "tencent_im.admin_identifier", "", 0, &err) ==
        ROOM_OUTBOX_OK);
  CHECK(room_outbox_options_set(opts, "hook.sync_publish", "inline", 6, &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_hook_new(opts, &hook, &err) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(hook == NULL);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "tencent_im.sdk_app_id"));
  CHECK(room_outbox_options_set(opts, "hook.sync_publish", "off", 3, &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_hook_new(opts, &hook, &err) == ROOM_OUTBOX_OK);
  CHECK(err == NULL);
  room_outbox_options_destroy(opts);
  if (hook != NULL) {
    CHECK(room_outbox_hook_commit(hook, cmd, WriteSnapshot, (void *)"c-room-nokey", &result,
                                  &err) == ROOM_OUTBOX_OK);
    CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_COMMITTED);
    CHECK(room_outbox_result_event_state(result, 0) == ROOM_OUTBOX_PENDING);
    CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE command_id = '%s' AND status = 'pending'",
                "c-cmd-nokey") == 1);
    room_outbox_result_destroy(result);
  }
  room_outbox_command_destroy(cmd);
  room_outbox_hook_destroy(hook);
  printf("c_abi_test: sync_publish off: a hook without IM credentials commits; inline refused\n");
}

/* A failing caller statement rolls the whole command back. */
static void TestFailingStatement(room_outbox_hook *hook) {
  room_outbox_command *cmd = NewCommand("c-cmd-fail", "c-room-fail");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  room_outbox_status status =
      room_outbox_hook_commit(hook, cmd, FailingStatement, NULL, &result, &err);
  CHECK(status != ROOM_OUTBOX_OK);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_FAILED);
  CHECK(room_outbox_result_event_count(result) == 0);
  CHECK(room_outbox_error_code(room_outbox_result_error(result)) == status);
  CHECK(strstr(room_outbox_error_message(room_outbox_result_error(result)), "no_such_table") != NULL);
  CHECK(ErrorIs(err, status, "no_such_table"));
  room_outbox_result_destroy(result);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-fail") == 0);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE command_id = '%s'", "c-cmd-fail") == 0);

  /* A callback that returns a status of its own: the commit fails with that status. */
  CHECK(room_outbox_hook_commit(hook, cmd, Refuse, NULL, &result, &err) == ROOM_OUTBOX_ABORTED);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_FAILED);
  CHECK(ErrorIs(err, ROOM_OUTBOX_ABORTED, "caller statements returned aborted"));
  room_outbox_result_destroy(result);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-fail") == 0);
  printf("c_abi_test: failing caller statement: rolled back, nothing written\n");

  /* Refused arguments: no result. */
  CHECK(room_outbox_hook_commit(hook, NULL, NULL, NULL, &result, NULL) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(result == NULL);
  CHECK(SetText(cmd, "color", "red") == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(room_outbox_command_set_int(cmd, "seq", 1, NULL) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(room_outbox_command_set_event_int(cmd, 2, "room_seq", 1, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "no event 2"));
  CHECK(room_outbox_params_add_int(NULL, 1) == ROOM_OUTBOX_INVALID_ARGUMENT);
  room_outbox_command_destroy(cmd);
  room_outbox_command_destroy(NULL);
  room_outbox_params_destroy(NULL);
  room_outbox_hook_destroy(NULL);
}

/* The statements callback cannot break the transaction: a nested commit on the same hook and a
 * COMMIT are refused; the outer command, whose callback ignores both, is refused as a whole
 * because its COMMIT statement failed. */
static void TestNestedCommit(room_outbox_hook *hook) {
  room_outbox_command *cmd = NewCommand("c-cmd-outer", "c-room-nested");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  CHECK(room_outbox_hook_commit(hook, cmd, NestedCommit, hook, &result, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_FAILED);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "caller statement refused"));
  room_outbox_result_destroy(result);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE room_id = '%s'", "c-room-nested") == 0);
  /* Afterwards the hook commits as before. */
  CHECK(room_outbox_hook_commit(hook, cmd, NULL, NULL, &result, &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_COMMITTED);
  room_outbox_result_destroy(result);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE command_id = '%s'", "c-cmd-outer") > 0);
  room_outbox_command_destroy(cmd);
  printf("c_abi_test: nested commit and COMMIT in the callback: refused, nothing written\n");
}

/* room_outbox_tx_execute_affected: the UPDATE that finds the room at the expected version
 * matches 1 row and commits; the one that expects an older version matches 0 and rolls back. */
static void TestAffectedRows(room_outbox_hook *hook) {
  room_outbox_command *won = NewCommand("c-cmd-won", "c-room-up");
  room_outbox_command *lost = NewCommand("c-cmd-lost", "c-room-up");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  struct Advance advance = {12, 0};
  uint64_t n = 99;
  CHECK(room_outbox_hook_commit(hook, won, AdvanceSnapshot, &advance, &result, &err) ==
        ROOM_OUTBOX_OK);
  CHECK(advance.matched == 1);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_COMMITTED);
  room_outbox_result_destroy(result);
  advance.expected = 12; /* stale: the room is at 13 now */
  CHECK(room_outbox_hook_commit(hook, lost, AdvanceSnapshot, &advance, &result, &err) ==
        ROOM_OUTBOX_ABORTED);
  CHECK(advance.matched == 0);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_FAILED);
  CHECK(ErrorIs(err, ROOM_OUTBOX_ABORTED, "caller statements returned aborted"));
  room_outbox_result_destroy(result);
  CHECK(Count("SELECT room_seq FROM c_snapshot WHERE room_id = '%s'", "c-room-up") == 13);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-won") == 1);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-lost") == 0);
  CHECK(room_outbox_tx_execute_affected(NULL, "SELECT 1", 8, NULL, &n, &err) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(n == 0);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "room_outbox_tx_execute_affected"));
  room_outbox_command_destroy(won);
  room_outbox_command_destroy(lost);
  printf("c_abi_test: affected rows: the current version matched 1 and committed, a stale one "
         "matched 0 and rolled back\n");
}

/* IM down: the command still commits; the event stays pending for outbox-relay. */
static void TestImDown(room_outbox_hook *hook) {
  room_outbox_command *cmd = NewCommand("c-cmd-down", "c-room-down");
  room_outbox_result *result = NULL;
  room_outbox_error *err = NULL;
  size_t len = 0;
  const char *why;
  CHECK(room_outbox_hook_commit(hook, cmd, NULL, NULL, &result, &err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_result_status(result) == ROOM_OUTBOX_COMMITTED);
  CHECK(room_outbox_result_event_state(result, 0) == ROOM_OUTBOX_PENDING);
  CHECK(room_outbox_result_event_state(result, 1) == ROOM_OUTBOX_SKIPPED);
  why = room_outbox_result_event_error(result, 0, &len);
  CHECK(why != NULL && len > 0);
  CHECK(Count("SELECT COUNT(*) FROM room_command_log WHERE command_id = '%s'", "c-cmd-down") == 1);
  CHECK(Count("SELECT COUNT(*) FROM room_outbox WHERE event_id = '%s' AND status = 'pending' "
              "AND retry_count = 0",
              "c-cmd-down-gift") == 1);
  printf("c_abi_test: IM down: committed, c-cmd-down-gift pending (%s)\n", why ? why : "");
  room_outbox_result_destroy(result);
  room_outbox_command_destroy(cmd);
}

/* The hooks' metrics after the commits above: the struct, and the Prometheus text through the
 * length protocol (measure, cut short, whole). */
static void TestMetrics(room_outbox_hook *up, room_outbox_hook *down) {
  room_outbox_hook_metrics m;
  room_outbox_error *err = NULL;
  const room_outbox_hook *both[2];
  char small[16];
  char *text;
  size_t len = 0;
  size_t whole = 0;
  CHECK(room_outbox_hook_metrics_get(down, &m, sizeof m, &err) == ROOM_OUTBOX_OK);
  CHECK(err == NULL);
  CHECK(m.commits_committed == 1 && m.commits_failed == 0);
  CHECK(m.sync_published == 0 && m.sync_failed + m.sync_timeout == 1);
  CHECK(m.rows_left_to_relay == 1);
  CHECK(m.sync_skipped_room_refused == 0 && m.late_marks_waiting == 0);
  CHECK(m.late_marks_written == 0 && m.late_marks_dropped == 0);
  CHECK(m.commit_duration_count == 1);
  CHECK(m.events_committed == 1 && m.publish_success == 0);
  CHECK(room_outbox_hook_metrics_get(up, &m, sizeof m, &err) == ROOM_OUTBOX_OK);
  CHECK(m.commits_committed >= 1 && m.sync_published >= 1 && m.rows_left_to_relay == 0);
  CHECK(m.publish_success >= 1 && m.publish_success <= m.events_committed);
  CHECK(room_outbox_hook_metrics_get(NULL, &m, sizeof m, &err) == ROOM_OUTBOX_INVALID_ARGUMENT);
  CHECK(ErrorIs(err, ROOM_OUTBOX_INVALID_ARGUMENT, "NULL hook"));

  both[0] = down;
  CHECK(room_outbox_hook_metrics_text(both, 1, "c-down", 6, NULL, 0, &len, &err) == ROOM_OUTBOX_OK);
  CHECK(len > sizeof small);
  CHECK(room_outbox_hook_metrics_text(both, 1, "c-down", 6, small, sizeof small, &whole, NULL) ==
        ROOM_OUTBOX_OK);
  CHECK(whole == len && small[sizeof small - 1] == '\0' && strlen(small) == sizeof small - 1);
  text = malloc(len + 1);
  CHECK(text != NULL);
  if (text != NULL) {
    CHECK(room_outbox_hook_metrics_text(both, 1, "c-down", 6, text, len + 1, &whole, &err) ==
          ROOM_OUTBOX_OK);
    CHECK(whole == len && strlen(text) == len);
    CHECK(strstr(text, "room_outbox_hook_rows_left_to_relay_total{hook=\"c-down\"} 1\n") != NULL);
    CHECK(strstr(text, "room_outbox_hook_commits_total{hook=\"c-down\",outcome=\"committed\"} 1\n") !=
          NULL);
    CHECK(strstr(text,
                 "room_outbox_hook_sync_skipped_total{hook=\"c-down\",reason=\"room_refused\"} 0\n") !=
          NULL);
    CHECK(strstr(text, "room_outbox_hook_late_marks_waiting{hook=\"c-down\"} 0\n") != NULL);
    CHECK(strstr(text, "room_outbox_hook_late_marks_written_total{hook=\"c-down\"} 0\n") != NULL);
    free(text);
  }
  both[1] = up;
  CHECK(room_outbox_hook_metrics_text(both, 2, NULL, 0, NULL, 0, &len, NULL) == ROOM_OUTBOX_OK);
  text = malloc(len + 1);
  if (text != NULL) {
    CHECK(room_outbox_hook_metrics_text(both, 2, NULL, 0, text, len + 1, &len, NULL) ==
          ROOM_OUTBOX_OK);
    CHECK(strstr(text, "room_outbox_hook_rows_left_to_relay_total 1\n") != NULL);
    CHECK(strstr(text, "hook=") == NULL);
    printf("c_abi_test: metrics of both hooks, summed:\n%.*s", (int)strcspn(text, "#"), text);
    free(text);
  }
  CHECK(room_outbox_hook_metrics_text(both, 1, NULL, 0, NULL, 0, NULL, NULL) ==
        ROOM_OUTBOX_INVALID_ARGUMENT);
  printf("c_abi_test: metrics: ok\n");
}

int main(int argc, char **argv) {
  room_outbox_error *err = NULL;
  room_outbox_hook *up;
  room_outbox_hook *down;
  char secret_key[256];
  if (argc != 6) {
    fprintf(stderr, "usage: c_abi_test UP_CONFIG DOWN_CONFIG MYSQL_SOCKET DATABASE SCRATCH_DIR\n");
    return 2;
  }
  CHECK(room_outbox_library_init(&err) == ROOM_OUTBOX_OK);
  CHECK(room_outbox_library_init(NULL) == ROOM_OUTBOX_OK); /* a second call: the first's status */
  db = mysql_init(NULL);
  if (db == NULL ||
      mysql_real_connect(db, NULL, "root", NULL, argv[4], 0, argv[3], 0) == NULL ||
      mysql_query(db, "CREATE TABLE c_snapshot (room_id VARCHAR(64) PRIMARY KEY, "
                      "room_seq BIGINT NOT NULL, heat DOUBLE, note TEXT)") != 0) {
    fprintf(stderr, "c_abi_test: database %s: %s\n", argv[4], db ? mysql_error(db) : "no memory");
    return 1;
  }
  TestVersionAndStatuses();
  TestBadOptions(argv[5]);
  TestConfigWarningsReachTheLog(argv[1], argv[5]);
  TestNoImCredentialsWhenOff(argv[1]);
  /* The up config names no secret key file: the key is given from memory. */
  up = NewHook(argv[1], ReadSecretKey(argv[5], secret_key, sizeof secret_key));
  down = NewHook(argv[2], NULL);
  if (up != NULL && down != NULL) {
    TestImUp(up);
    TestFailingStatement(up);
    TestNestedCommit(up);
    TestAffectedRows(up);
    TestImDown(down);
    TestMetrics(up, down);
  }
  room_outbox_hook_destroy(up);
  room_outbox_hook_destroy(down);
  mysql_close(db);
  room_outbox_library_cleanup();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
