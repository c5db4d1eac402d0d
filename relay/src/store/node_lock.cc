#include "store/node_lock.h"

#include <array>
#include <utility>

#include "core/claim_token.h"

namespace room_outbox::relay {
namespace {

// GET_LOCK: 1 when taken. Otherwise the refusal, naming the connection that holds it.
core::Result<uint64_t> TakeLock(core::MariaDbConnection& conn, const std::string& name,
                                const std::string& node_id) {
  auto stmt = conn.Prepared(core::sql::Stmt::kNodeLockTake);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 3> params = {name, kNodeLockWaitSeconds, name};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return core::Fail(rows.error());
  if (rows->size() != 1 || (*rows)[0].IsNull(0)) {
    return core::Fail(ErrorCode::kInternal, "node_lock_take: GET_LOCK('" + name + "') failed");
  }
  auto got = (*rows)[0].Int(0);
  auto holder = (*rows)[0].Int(1);
  if (!got) return core::Fail(got.error());
  if (!holder) return core::Fail(holder.error());
  if (*got == 1) return static_cast<uint64_t>(*holder);
  return core::Fail(ErrorCode::kAlreadyExists,
                    "node_id \"" + node_id + "\" is in use by another running relay (the lock '" +
                        name + "' is held by database connection " + std::to_string(*holder) +
                        "): node_id must be unique per relay; give each relay its own node_id");
}

// Gives back the rows leased under `node_prefix` by runs other than `token_prefix`'s.
core::Result<uint64_t> ReleaseEarlierRuns(core::MariaDbConnection& conn,
                                          const std::string& node_prefix,
                                          const std::string& token_prefix) {
  auto stmt = conn.Prepared(core::sql::Stmt::kReleaseNodeLeases);
  if (!stmt) return core::Fail(stmt.error());
  const std::array<core::SqlValue, 2> params = {node_prefix + "%", token_prefix + "%"};
  if (auto done = (*stmt)->Execute(params); !done) return core::Fail(done.error());
  return (*stmt)->AffectedRows();
}

}  // namespace

std::string NodeLockName(std::string_view database, std::string_view node_id) {
  std::string key = std::to_string(database.size()) + ":";
  key.append(database).append(node_id);
  return "room_outbox.relay." + core::ShortHash(key);
}

NodeLock::NodeLock(const MysqlOptions& options, std::string node_id)
    : options_(options),
      node_id_(std::move(node_id)),
      name_(NodeLockName(options_.database, node_id_)),
      node_prefix_(core::RelayNodeTokenPrefix(node_id_)),
      token_prefix_(node_prefix_ + core::NewRelayRunTag()),
      run_{token_prefix_, name_, node_id_} {}

NodeLock::~NodeLock() {
  std::lock_guard<std::mutex> guard(mu_);
  if (conn_) (void)ForgetRun(*conn_, token_prefix_);
}

core::Result<NodeLockHold> NodeLock::Hold() {
  std::lock_guard<std::mutex> guard(mu_);
  if (conn_ && conn_->Ping()) {
    return NodeLockHold{.connection_id = conn_->ConnectionId(), .takes = takes_};
  }
  // Gone (or never taken): the server released the lock with the connection.
  conn_.reset();
  return Take();
}

core::Result<NodeLockHold> NodeLock::Take() {
  auto conn = core::MariaDbConnection::Connect(options_);
  if (!conn) return core::Fail(conn.error());
  if (auto prepared = (*conn)->PrepareNow(kNodeLockStatements); !prepared) {
    return core::Fail(prepared.error());
  }
  auto holder = TakeLock(**conn, name_, node_id_);
  if (!holder) return core::Fail(holder.error());
  // A failure here closes the connection, which releases the lock: the next Hold() starts over.
  auto released = ReleaseEarlierRuns(**conn, node_prefix_, token_prefix_);
  if (!released) return core::Fail(released.error());
  // Findable before its first claim: a run that dies right after it is given back too.
  if (auto beat = BeatRun(**conn, run_); !beat) return core::Fail(beat.error());
  if (auto forgot = ForgetEarlierRuns(**conn, run_); !forgot) return core::Fail(forgot.error());
  conn_ = std::move(*conn);
  ++takes_;
  return NodeLockHold{
      .taken = true, .released = *released, .connection_id = *holder, .takes = takes_};
}

}  // namespace room_outbox::relay
