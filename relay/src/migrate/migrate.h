// The schema's version and its migration: what `outbox-relay migrate` does, and the check that
// outbox-relay and its operator commands make before they start.
//
// The version table (schema/000_schema_version.sql) records each step applied. Migrate reads it
// (a database without it, as information_schema tells without a failing statement, has recorded
// nothing), refuses a database that records a version newer
// than the binary's last step, and applies the missing steps in order, statement by statement
// (sql_split.h). A statement that finds its work done, an ADD COLUMN or ADD INDEX whose column or
// index is there (1060, 1061) or a DROP of one that is gone (1091), counts as applied: a database
// migrated by hand, in full or half way, is recognised. Each step ends by recording itself, so a
// step that failed half way is run again by the next migrate. Every statement is valid on
// MariaDB 10.6+ and MySQL 8.0.1+; DDL commits on its own, so no step is one transaction.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "core/result.h"
#include "migrate/schema_steps.h"
#include "room_outbox/options.h"

namespace room_outbox::relay::migrate {

// The schema version this outbox-relay needs: its marks write each row's attempt history (011),
// its run is recorded in room_outbox_relay_run and a gone run's leases found through
// idx_claim_token (010), its claim and marks work from the room schedule (009: room_outbox_room,
// room_listed), use pack_size (007), it keeps its share of the app's IM budget in
// room_outbox_im_member (005), its claim uses drop_count (004), its operator commands the parked
// status (003). 008 (idx_command_id covering the MySQL set's commit read-back)
// changes no statement's result.
inline constexpr int64_t kRequiredSchemaVersion = 11;

struct SchemaState {
  bool has_version_table = false;
  std::vector<int64_t> recorded;  // ascending
  // The highest version recorded; -1 when none.
  int64_t current() const { return recorded.empty() ? -1 : recorded.back(); }
};

// Reads the version table. A database without it: has_version_table false, nothing recorded.
[[nodiscard]] core::Result<SchemaState> ReadSchemaState(core::MariaDbConnection& conn);

// The steps `state` has not recorded, in order. kInvalidArgument when it records a version newer
// than the last step this binary has.
[[nodiscard]] core::Result<std::vector<SchemaStep>> PendingSteps(const SchemaState& state);

// What ApplyStep did.
struct AppliedStep {
  int64_t version = 0;
  std::string name;
  int64_t statements = 0;       // run
  int64_t already_applied = 0;  // of them, found their work done (1060, 1061, 1091)
};

// Runs the statements of `step` one by one. The first other error stops it (the step is not
// recorded) and names the step and the statement.
[[nodiscard]] core::Result<AppliedStep> ApplyStep(core::MariaDbConnection& conn,
                                                  const SchemaStep& step);

// Reads the state and applies every pending step in order: what `outbox-relay migrate` does.
// Returns the steps applied (none when the schema is up to date).
[[nodiscard]] core::Result<std::vector<AppliedStep>> MigrateToLatest(core::MariaDbConnection& conn);

// The schema a database holds, judged against kRequiredSchemaVersion.
struct SchemaVerdict {
  bool has_version_table = false;
  int64_t found = -1;  // the highest version recorded; -1 when none
  bool too_old() const { return !has_version_table || found < kRequiredSchemaVersion; }
  // Why the schema is too old and what to run (`outbox-relay migrate`); empty when it is not.
  std::string Explain() const;
};

// Reads the version table and judges it.
[[nodiscard]] core::Result<SchemaVerdict> JudgeSchema(core::MariaDbConnection& conn);
// The same on a connection of its own to `options` (whose errors it returns as they are: a server
// below its minimum version is kInvalidArgument, an unreachable one kUnavailable).
[[nodiscard]] core::Result<SchemaVerdict> JudgeSchema(const MysqlOptions& options);

// kInvalidArgument carrying SchemaVerdict::Explain() when the schema records no version table or
// a version older than kRequiredSchemaVersion: what `--once` and the operator commands refuse.
[[nodiscard]] core::Result<void> CheckSchemaVersion(core::MariaDbConnection& conn);
// The same on a connection of its own to `options` (whose errors it returns as they are).
[[nodiscard]] core::Result<void> CheckSchemaVersion(const MysqlOptions& options);

}  // namespace room_outbox::relay::migrate
