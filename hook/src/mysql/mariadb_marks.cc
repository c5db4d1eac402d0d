// MariaDbOutboxStore: the writes of a claim's results (published, failed, parked, released),
// used by the relay and by the hook's sync publish.
#include <array>
#include <string>
#include <vector>

#include "mysql/id_lists.h"
#include "mysql/mariadb_outbox_store.h"
#include "mysql/outbox_sql.h"

namespace room_outbox {

Result<size_t> MariaDbOutboxStore::UpdateHeld(MariaDbConnection& conn, std::string_view name,
                                              std::string_view sql_prefix,
                                              std::vector<SqlValue> set_params,
                                              const std::string& token,
                                              std::span<const int64_t> ids) {
  auto run = [&]() -> Result<size_t> {
    size_t total = 0;
    auto updated =
        ForEachChunk(ids.size(), [&](size_t size, size_t at, size_t count) -> Result<void> {
          auto stmt = conn.Prepared(std::string(name) + "_" + std::to_string(size),
                                    std::string(sql_prefix) + Placeholders(size));
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
  };
  if (ids.size() <= kListSizes.back()) {
    return run();  // one statement is atomic on its own
  }
  return InTransaction(conn, run);
}

Result<size_t> MariaDbOutboxStore::MarkPublished(const std::string& token,
                                                 std::span<const int64_t> ids) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    return UpdateHeld(conn, "mark_published", sql::kMarkPublishedPrefix, {}, token, ids);
  });
}

Result<size_t> MariaDbOutboxStore::Release(const std::string& token,
                                           std::span<const int64_t> ids) {
  if (ids.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    return UpdateHeld(conn, "release", sql::kReleasePrefix, {}, token, ids);
  });
}

template <class ParamsOf>
Result<size_t> MariaDbOutboxStore::UpdateEachAttempt(std::string_view name, std::string_view sql,
                                                     std::span<const FailedAttempt> attempts,
                                                     ParamsOf&& params_of) {
  if (attempts.empty()) {
    return 0;
  }
  return WithConnection([&](MariaDbConnection& conn) {
    auto run = [&]() -> Result<size_t> {
      auto stmt = conn.Prepared(std::string(name), sql);
      if (!stmt) {
        return Fail(stmt.error());
      }
      size_t total = 0;
      for (const FailedAttempt& attempt : attempts) {
        const auto params = params_of(attempt);
        if (auto done = (*stmt)->Execute(params); !done) {
          return Fail(done.error());
        }
        total += static_cast<size_t>((*stmt)->AffectedRows());
      }
      return total;
    };
    if (attempts.size() == 1) {
      return run();
    }
    return InTransaction(conn, run);
  });
}

Result<size_t> MariaDbOutboxStore::MarkFailed(const std::string& token,
                                              std::span<const FailedAttempt> attempts) {
  return UpdateEachAttempt("mark_failed", sql::kMarkFailed, attempts,
                           [&](const FailedAttempt& attempt) {
                             return std::array<SqlValue, 5>{
                                 TruncateUtf8(attempt.error, kMaxLastErrorChars),
                                 attempt.retry_after_ms, int64_t{attempt.dropped ? 1 : 0},
                                 attempt.id, token};
                           });
}

// One statement per row (primary key, token-checked like mark_failed); several rows in one
// transaction.
Result<size_t> MariaDbOutboxStore::MarkParked(const std::string& token,
                                              std::span<const FailedAttempt> attempts) {
  return UpdateEachAttempt("mark_parked", sql::kMarkParked, attempts,
                           [&](const FailedAttempt& attempt) {
                             return std::array<SqlValue, 3>{
                                 TruncateUtf8(attempt.error, kMaxLastErrorChars), attempt.id,
                                 token};
                           });
}

}  // namespace room_outbox
