// The relay daemons' runs as room_outbox_relay_run records them (schema 010), and the give-back
// of a gone run's leases. A run is one relay process: its row names its claim tokens' prefix
// ("relay-<node>-<run>-", core/claim_token.h) and its node's lock (node_lock.h). A run whose
// node lock is free is proven gone (no connection holds the lock, so no live relay runs under its
// node_id), whatever node_id it ran under: any relay may give its leases back.
//
// Each function runs on a connection the caller owns and has prepared kRelayRunStatements on.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "core/result.h"

namespace room_outbox::relay {

// What a connection that writes and reads the runs prepares at connect.
inline constexpr const core::sql::Statement* kRelayRunStatements[] = {
    &core::sql::Stmt::kRelayRunBeat,
    &core::sql::Stmt::kRelayRunsGone,
    &core::sql::Stmt::kReleaseRunLeases,
    &core::sql::Stmt::kRelayRunForget,
};

// One run's row.
struct RelayRun {
  std::string token_prefix;  // "relay-<16 hex: node>-<8 hex: run>-"
  std::string lock_name;     // NodeLockName(database, node_id)
  std::string node_id;
};

// A run found gone (FindGoneRuns).
struct GoneRun {
  std::string token_prefix;
  std::string node_id;
  int64_t beat_age_ms = 0;  // on the server's clock
};

// Writes the run's row, or beats it (a row deleted by a relay that took it for gone is written
// again).
[[nodiscard]] core::Result<void> BeatRun(core::MariaDbConnection& conn, const RelayRun& run);

// Deletes the rows of the earlier runs of `run`'s node (same lock name, another prefix): called
// by the run that took the node's lock, after it gave their leases back.
[[nodiscard]] core::Result<void> ForgetEarlierRuns(core::MariaDbConnection& conn,
                                                   const RelayRun& run);

// The runs whose node lock is free and whose beat is older than `beat_older_than`, oldest beat
// first, at most `limit`.
[[nodiscard]] core::Result<std::vector<GoneRun>> FindGoneRuns(
    core::MariaDbConnection& conn, std::chrono::milliseconds beat_older_than, int64_t limit);

// Gives back every row the run with `token_prefix` still holds (due now, retry_count and
// last_error kept). Returns the rows given back.
[[nodiscard]] core::Result<uint64_t> ReleaseRunLeases(core::MariaDbConnection& conn,
                                                      const std::string& token_prefix);

// Deletes the run's row.
[[nodiscard]] core::Result<void> ForgetRun(core::MariaDbConnection& conn,
                                           const std::string& token_prefix);

}  // namespace room_outbox::relay
