#include "core/mysql/store_session.h"

#include <algorithm>
#include <atomic>

#include "core/mysql/id_lists.h"
#include "core/mysql/outbox_sql.h"

namespace room_outbox::core {

namespace {

std::atomic<uint64_t> connection_faults{0};

}  // namespace

Result<void> StoreSession::Connect() {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  return {};
}

void StoreSession::NoteConnectionFault() {
  connection_faults.fetch_add(1, std::memory_order_relaxed);
}

uint64_t StoreSession::ConnectionFaults() {
  return connection_faults.load(std::memory_order_relaxed);
}

Result<MariaDbConnection*> StoreSession::Live() {
  const int64_t idle_ms = clock_.SteadyMs() - last_used_ms_;
  const uint64_t faults = ConnectionFaults();
  if (conn_ &&
      (idle_ms >= std::chrono::milliseconds(kPingAfterIdle).count() || faults != faults_seen_)) {
    // Nothing is in flight between calls, so replacing a connection the server (or a
    // firewall) closed while idle loses nothing.
    if (!conn_->Ping()) {
      conn_.reset();
    }
  }
  faults_seen_ = faults;
  if (!conn_) {
    auto conn = MariaDbConnection::Connect(options_);
    if (!conn) {
      return Fail(conn.error());
    }
    if (auto prepared = (*conn)->PrepareNow(prepare_at_connect_); !prepared) {
      return Fail(prepared.error());
    }
    conn_ = std::move(*conn);
  }
  last_used_ms_ = clock_.SteadyMs();
  return conn_.get();
}

void StoreSession::Abort(MariaDbConnection& conn) {
  if (!conn.Rollback()) {
    // Closing the connection makes the server roll the transaction back.
    drop_after_call_ = true;
  }
}

Result<size_t> StoreSession::UpdateHeldChunks(MariaDbConnection& conn, const sql::Statement& id,
                                              const std::vector<SqlValue>& set_params,
                                              const std::string& token,
                                              std::span<const int64_t> ids) {
  size_t total = 0;
  auto updated =
      ForEachChunk(ids.size(), [&](size_t size, size_t at, size_t count) -> Result<void> {
        auto stmt = conn.Prepared(id, size);
        if (!stmt) {
          return Fail(stmt.error());
        }
        std::vector<SqlValue> params = set_params;
        params.reserve(set_params.size() + 1 + size);
        params.emplace_back(token);
        for (size_t k = 0; k < size; ++k) {
          params.emplace_back(ids[at + std::min(k, count - 1)]);
        }
        if (auto done = (*stmt)->Execute(params); !done) {
          return done;
        }
        total += static_cast<size_t>((*stmt)->AffectedRows());
        return {};
      });
  if (!updated) {
    return Fail(updated.error());
  }
  return total;
}

Result<size_t> StoreSession::UpdateHeld(MariaDbConnection& conn, const sql::Statement& id,
                                        std::vector<SqlValue> set_params, const std::string& token,
                                        std::span<const int64_t> ids) {
  auto run = [&]() { return UpdateHeldChunks(conn, id, set_params, token, ids); };
  if (ids.size() <= kListSizes.back()) {
    return run();  // one statement is atomic on its own
  }
  return InTransaction(conn, run);
}

Result<size_t> StoreSession::MarkPublished(const std::string& token, std::span<const int64_t> ids) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    return UpdateHeld(conn, sql::Stmt::kMarkPublished, {}, token, ids);
  });
}

Result<size_t> StoreSession::Release(const std::string& token, std::span<const int64_t> ids,
                                     const sql::Statement& release) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection(
      [&](MariaDbConnection& conn) { return UpdateHeld(conn, release, {}, token, ids); });
}

Result<int64_t> StoreSession::RowsRead() {
  return WithConnection([&](MariaDbConnection& conn) -> Result<int64_t> {
    auto rows = conn.QueryText(sql::Stmt::kSessionRowsRead.name, sql::kSessionRowsRead);
    if (!rows) {
      return Fail(rows.error());
    }
    int64_t total = 0;
    for (const MariaDbConnection::TextRow& row : *rows) {
      if (row.size() < 2 || !row[1]) {
        return Fail(ErrorCode::kInternal, "session_rows_read: a row without a value");
      }
      total += std::stoll(*row[1]);
    }
    return total;
  });
}

}  // namespace room_outbox::core
