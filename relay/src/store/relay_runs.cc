#include "store/relay_runs.h"

#include <array>

namespace room_outbox::relay {
namespace {

// Runs `id` with `params`; the rows it changed.
template <size_t N>
core::Result<uint64_t> Write(core::MariaDbConnection& conn, const core::sql::Statement& id,
                             const std::array<core::SqlValue, N>& params) {
  auto stmt = conn.Prepared(id);
  if (!stmt) return core::Fail(stmt.error());
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  return (*stmt)->AffectedRows();
}

}  // namespace

core::Result<void> BeatRun(core::MariaDbConnection& conn, const RelayRun& run) {
  const std::array<core::SqlValue, 3> params = {run.token_prefix, run.lock_name, run.node_id};
  auto done = Write(conn, core::sql::Stmt::kRelayRunBeat, params);
  if (!done) return core::Fail(done.error());
  return {};
}

core::Result<void> ForgetEarlierRuns(core::MariaDbConnection& conn, const RelayRun& run) {
  const std::array<core::SqlValue, 2> params = {run.lock_name, run.token_prefix};
  auto done = Write(conn, core::sql::Stmt::kRelayRunsForgetNode, params);
  if (!done) return core::Fail(done.error());
  return {};
}

core::Result<std::vector<GoneRun>> FindGoneRuns(core::MariaDbConnection& conn,
                                                std::chrono::milliseconds beat_older_than,
                                                int64_t limit) {
  auto stmt = conn.Prepared(core::sql::Stmt::kRelayRunsGone);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 2> params = {static_cast<int64_t>(beat_older_than.count()),
                                                limit};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  std::vector<GoneRun> gone;
  gone.reserve(rows->size());
  for (core::ResultRow& row : *rows) {
    auto age = row.Int(2);
    if (!age) return core::Fail(age.error());
    gone.push_back(GoneRun{row.TakeStr(0), row.TakeStr(1), *age});
  }
  return gone;
}

core::Result<uint64_t> ReleaseRunLeases(core::MariaDbConnection& conn,
                                        const std::string& token_prefix) {
  const std::array<core::SqlValue, 1> params = {token_prefix + "%"};
  return Write(conn, core::sql::Stmt::kReleaseRunLeases, params);
}

core::Result<void> ForgetRun(core::MariaDbConnection& conn, const std::string& token_prefix) {
  const std::array<core::SqlValue, 1> params = {token_prefix};
  auto done = Write(conn, core::sql::Stmt::kRelayRunForget, params);
  if (!done) return core::Fail(done.error());
  return {};
}

}  // namespace room_outbox::relay
