// MariaDbOutboxStore: connection policy (connect on demand, ping after idle, drop on
// kUnavailable), transactions, TruncateUtf8 and Stats. The other calls live in mariadb_commit.cc
// (hook side), mariadb_claim.cc and mariadb_marks.cc (relay side).
#include "mysql/mariadb_outbox_store.h"

#include <algorithm>
#include <utility>

#include "mysql/outbox_sql.h"

namespace room_outbox {

std::string TruncateUtf8(std::string_view text, size_t max_chars) {
  std::string out;
  out.reserve(std::min(text.size(), max_chars * 4));
  size_t chars = 0;
  size_t i = 0;
  while (i < text.size() && chars < max_chars) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t len = 0;
    unsigned char min_second = 0x80;
    unsigned char max_second = 0xBF;
    if (lead < 0x80) {
      len = 1;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      len = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      len = 3;
      if (lead == 0xE0) min_second = 0xA0;  // no overlong forms
      if (lead == 0xED) max_second = 0x9F;  // no UTF-16 surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      len = 4;
      if (lead == 0xF0) min_second = 0x90;
      if (lead == 0xF4) max_second = 0x8F;  // nothing above U+10FFFF
    }
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k) {
      const auto c = static_cast<unsigned char>(text[i + k]);
      const unsigned char lo = k == 1 ? min_second : 0x80;
      const unsigned char hi = k == 1 ? max_second : 0xBF;
      valid = c >= lo && c <= hi;
    }
    if (valid) {
      out.append(text.substr(i, len));
      i += len;
    } else {
      out += '?';
      i += 1;
    }
    ++chars;
  }
  return out;
}

MariaDbOutboxStore::MariaDbOutboxStore(MysqlOptions options) : options_(std::move(options)) {}

MariaDbOutboxStore::~MariaDbOutboxStore() = default;

std::unique_ptr<MariaDbOutboxStore> MakeMariaDbOutboxStore(const MysqlOptions& options) {
  return std::make_unique<MariaDbOutboxStore>(options);
}

uint64_t MariaDbOutboxStore::connection_id() const { return conn_ ? conn_->ConnectionId() : 0; }

Result<void> MariaDbOutboxStore::Connect() {
  auto conn = Live();
  if (!conn) {
    return Fail(conn.error());
  }
  return {};
}

Result<MariaDbConnection*> MariaDbOutboxStore::Live() {
  if (conn_ && std::chrono::steady_clock::now() - last_used_ >= kPingAfterIdle) {
    // Nothing is in flight between calls, so replacing a connection the server (or a
    // firewall) closed while idle loses nothing.
    if (!conn_->Ping()) {
      conn_.reset();
    }
  }
  if (!conn_) {
    auto conn = MariaDbConnection::Connect(options_);
    if (!conn) {
      return Fail(conn.error());
    }
    conn_ = std::move(*conn);
  }
  last_used_ = std::chrono::steady_clock::now();
  return conn_.get();
}

void MariaDbOutboxStore::Abort(MariaDbConnection& conn) {
  if (!conn.Rollback()) {
    // Closing the connection makes the server roll the transaction back.
    drop_after_call_ = true;
  }
}

Result<int64_t> MariaDbOutboxStore::RowsRead() {
  return WithConnection([&](MariaDbConnection& conn) -> Result<int64_t> {
    auto stmt = conn.Prepared("rows_read", sql::kSessionRowsRead);
    if (!stmt) {
      return Fail(stmt.error());
    }
    if (auto done = (*stmt)->Execute({}); !done) {
      return Fail(done.error());
    }
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Fail(rows.error());
    }
    int64_t total = 0;
    for (const ResultRow& row : *rows) {
      auto value = row.Int(1);
      if (!value) {
        return Fail(value.error());
      }
      total += *value;
    }
    return total;
  });
}

Result<OutboxStats> MariaDbOutboxStore::Stats() {
  return WithConnection([&](MariaDbConnection& conn) -> Result<OutboxStats> {
    auto stmt = conn.Prepared("stats", sql::kStats);
    if (!stmt) {
      return Fail(stmt.error());
    }
    if (auto done = (*stmt)->Execute({}); !done) {
      return Fail(done.error());
    }
    auto rows = (*stmt)->FetchAll();
    if (!rows) {
      return Fail(rows.error());
    }
    if (rows->size() != 1) {
      return Fail(ErrorCode::kInternal,
                  "stats: expected one row, got " + std::to_string(rows->size()));
    }
    auto pending = (*rows)[0].Int(0);
    auto age = (*rows)[0].Int(1);
    auto held_back = (*rows)[0].Int(2);
    if (!pending || !age || !held_back) {
      return Fail(!pending ? pending.error() : !age ? age.error() : held_back.error());
    }
    return OutboxStats{
        .pending = *pending, .oldest_pending_age_ms = *age, .rooms_held_back = *held_back};
  });
}

}  // namespace room_outbox
