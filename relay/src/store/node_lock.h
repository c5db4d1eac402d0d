// NodeLock: a relay daemon's hold on its node_id. It holds the named lock NodeLockName(database,
// node_id) (GET_LOCK, on both servers) on a connection of its own, kept for the process's life:
// the server releases the lock when that connection ends, so whoever gets it knows that no other
// live relay runs with this node_id on this database. Right after taking it, it gives back the
// rows leased under the node's token prefix by other runs (kReleaseNodeLeases): a relay killed
// and restarted at once resumes its rooms at once instead of after the dead run's leases. Then it
// writes its run's row in room_outbox_relay_run (relay_runs.h) and deletes those of the node's
// earlier runs, so that a relay of any node_id finds this run, and gives its leases back, once
// this lock is free (daemon/lease_takeover.h). The destructor deletes the run's row.
//
// Hold() is asked before every claim: a ping of the lock's connection while it lives; when it
// is gone (a database restart, the server dropped it), the lock is taken again before anything
// is claimed. When another relay holds it (the same node_id configured twice) Hold() fails with
// kAlreadyExists and nothing may be claimed: two relays never share a node's leases.
//
// Thread-safety: every call may come from any thread (the worker and its claim ahead).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "core/result.h"
#include "core/wipe.h"
#include "store/relay_runs.h"
#include "room_outbox/options.h"

namespace room_outbox::relay {

// What the lock's connection prepares at connect.
inline constexpr const core::sql::Statement* kNodeLockStatements[] = {
    &core::sql::Stmt::kNodeLockTake,      &core::sql::Stmt::kReleaseNodeLeases,
    &core::sql::Stmt::kRelayRunBeat,      &core::sql::Stmt::kRelayRunsForgetNode,
    &core::sql::Stmt::kRelayRunForget,
};

// "room_outbox.relay." + the first 16 hex characters of SHA-256(<length of database>:<database>
// <node_id>): 34 characters, within MySQL's 64 for any node_id. Named locks are the server's, not
// a database's: the database is part of the name, so two outboxes on one server (each with its
// own relays) never refuse each other.
std::string NodeLockName(std::string_view database, std::string_view node_id);

// How long a take waits for the lock: a predecessor killed a moment ago may still have its
// connection open on the server for a few milliseconds.
inline constexpr int64_t kNodeLockWaitSeconds = 2;

// What Hold() did.
struct NodeLockHold {
  bool taken = false;     // the lock was taken by this call (at start, or after a lost connection)
  uint64_t released = 0;  // rows of earlier runs given back by this call
  uint64_t connection_id = 0;  // the lock's connection
  uint64_t takes = 0;  // how often this process has taken the lock so far (1 after the first take)
};

class NodeLock {
 public:
  NodeLock(const MysqlOptions& options, std::string node_id);
  // Deletes this run's row (best effort) while the lock is held; the lock goes with the connection.
  ~NodeLock();
  NodeLock(const NodeLock&) = delete;
  NodeLock& operator=(const NodeLock&) = delete;

  // Makes sure this process holds the lock (see the file comment). Errors: kAlreadyExists
  // (another live relay holds it: the message names node_id and says it must be unique),
  // kUnavailable (the database cannot be reached; the caller retries), others from the server.
  [[nodiscard]] core::Result<NodeLockHold> Hold();

  const std::string& node_id() const { return node_id_; }
  const std::string& name() const { return name_; }
  // The start of this run's claim tokens: the node's prefix and the run's tag.
  const std::string& token_prefix() const { return token_prefix_; }
  // This run as room_outbox_relay_run records it.
  const RelayRun& run() const { return run_; }

 private:
  [[nodiscard]] core::Result<NodeLockHold> Take();

  const core::SecretOwner<MysqlOptions> options_;
  const std::string node_id_;
  const std::string name_;
  const std::string node_prefix_;
  const std::string token_prefix_;
  const RelayRun run_;
  std::mutex mu_;
  std::unique_ptr<core::MariaDbConnection> conn_;  // holds the lock while set
  uint64_t takes_ = 0;
};

}  // namespace room_outbox::relay
