// MariaDbRelayStore: the writes of a failed attempt (MarkFailed, MarkParked). MarkPublished and
// Release are StoreSession's, shared with the hook.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "core/mysql/outbox_sql.h"
#include "core/utf8.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::relay {

template <class ParamsOf>
core::Result<size_t> MariaDbRelayStore::UpdateEachAttempt(const core::sql::Statement& id,
                                                          std::span<const FailedAttempt> attempts,
                                                          ParamsOf&& params_of) {
  if (attempts.empty()) {
    return 0;
  }
  return session_.WithConnection([&](core::MariaDbConnection& conn) {
    auto run = [&]() -> core::Result<size_t> {
      auto stmt = conn.Prepared(id);
      if (!stmt) {
        return core::Fail(stmt.error());
      }
      size_t total = 0;
      for (const FailedAttempt& attempt : attempts) {
        const auto params = params_of(attempt);
        if (auto done = (*stmt)->Execute(params); !done) {
          return core::Fail(done.error());
        }
        total += static_cast<size_t>((*stmt)->AffectedRows());
      }
      return total;
    };
    if (attempts.size() == 1) {
      return run();
    }
    return session_.InTransaction(conn, run);
  });
}

// One statement per row, each reading the server's clock: in descending id order, so a later row
// never gets a later due time than an earlier one (relay_store.h). Every row is held by `token`
// and written by primary key, and claims skip locked rows, so the order cannot deadlock.
core::Result<size_t> MariaDbRelayStore::MarkFailed(const std::string& token,
                                                   std::span<const FailedAttempt> attempts) {
  std::vector<FailedAttempt> latest_first(attempts.begin(), attempts.end());
  std::sort(latest_first.begin(), latest_first.end(),
            [](const FailedAttempt& a, const FailedAttempt& b) { return a.id > b.id; });
  return UpdateEachAttempt(core::sql::Stmt::kMarkFailed, latest_first,
                           [&](const FailedAttempt& attempt) {
                             return std::array<core::SqlValue, 6>{
                                 core::TruncateUtf8(attempt.error, core::kMaxLastErrorChars),
                                 attempt.retry_after_ms,
                                 int64_t{attempt.dropped ? 1 : 0},
                                 int64_t{attempt.pack_size},
                                 attempt.id,
                                 token};
                           });
}

// One statement per row (primary key, token-checked like mark_failed); several rows in one
// transaction.
core::Result<size_t> MariaDbRelayStore::MarkParked(const std::string& token,
                                                   std::span<const FailedAttempt> attempts) {
  return UpdateEachAttempt(
      core::sql::Stmt::kMarkParked, attempts, [&](const FailedAttempt& attempt) {
        return std::array<core::SqlValue, 4>{
            int64_t{attempt.attempted ? 1 : 0},
            core::TruncateUtf8(attempt.error, core::kMaxLastErrorChars), attempt.id, token};
      });
}

}  // namespace room_outbox::relay
