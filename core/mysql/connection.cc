#include "core/mysql/connection.h"

#include <algorithm>

#include "core/mysql/connect_options.h"
#include "core/mysql/mysql_error.h"
#include "core/mysql/statement_count.h"
#include "core/mysql/statement_text.h"

namespace room_outbox::core {
namespace {

// The dialect of the server `mysql` reached (its handshake), as `options` ask.
Result<Dialect> DetectDialect(MYSQL* mysql, const MysqlOptions& options) {
  const ServerVersion server =
      ServerVersionOf(mariadb_connection(mysql) != 0, mysql_get_server_version(mysql));
  auto dialect = ChooseDialect(server, options.dialect);
  if (!dialect) {
    return Fail(dialect.error().code,
                "mysql_real_connect(" + ConnectTarget(options) + "): " + dialect.error().message);
  }
  return dialect;
}

}  // namespace

Result<std::unique_ptr<MariaDbConnection>> MariaDbConnection::Connect(const MysqlOptions& options) {
  MysqlPtr mysql{mysql_init(nullptr)};
  if (!mysql) {
    return Fail(ErrorCode::kInternal, "mysql_init: out of memory");
  }
  if (auto set = SetConnectOptions(mysql.get(), options); !set) {
    return Fail(set.error());
  }
  const char* password = options.password.empty() ? nullptr : options.password.c_str();
  const char* socket = options.socket.empty() ? nullptr : options.socket.c_str();
  const char* host = options.socket.empty() ? options.host.c_str() : nullptr;
  // CLIENT_FOUND_ROWS: an UPDATE reports the rows it matched, which is what the mark calls
  // count. No CLIENT_MULTI_STATEMENTS: one statement per call.
  if (mysql_real_connect(mysql.get(), host, options.user.c_str(), password,
                         options.database.c_str(), socket ? 0 : options.port, socket,
                         CLIENT_FOUND_ROWS) == nullptr) {
    return Fail(FromMysqlErrno(mysql_errno(mysql.get()),
                               "mysql_real_connect(" + ConnectTarget(options) + ")",
                               mysql_error(mysql.get())));
  }
  if (auto tls = CheckTlsInUse(mysql.get(), options); !tls) {
    return Fail(tls.error());
  }
  auto dialect = DetectDialect(mysql.get(), options);
  if (!dialect) {
    return Fail(dialect.error());
  }
  std::unique_ptr<MariaDbConnection> conn(new MariaDbConnection(std::move(mysql), *dialect));
  if (auto session = conn->SetUpSession(); !session) {
    return Fail(session.error());
  }
  return conn;
}

Result<void> MariaDbConnection::SetUpSession() {
  // READ COMMITTED: a claim's locking reads see the latest committed rows and lock only what they
  // return. UTC: the store's times come from UNIX_TIMESTAMP(NOW(3)) (outbox_sql.h), which in UTC
  // has no DST gap or repeat to resolve. Strict modes: a value that does not fit its column is an
  // error, never silently truncated (commit_checks.h refuses such input first; this is the
  // database's own guard). A short lock wait: a blocked write fails fast and is retried.
  for (const sql::Statement& id : {sql::Stmt::kSessionIsolation, sql::Stmt::kSessionTimeZone,
                                   sql::Stmt::kSessionSqlMode, sql::Stmt::kSessionLockWait}) {
    if (auto r = Run(id); !r) {
      return r;
    }
  }
  return {};
}

MariaDbConnection::~MariaDbConnection() {
  // Statements first: they belong to the handle closed after them.
  table_statements_.clear();
  statements_.clear();
  caller_statements_.clear();
}

Result<void> MariaDbConnection::Run(const sql::Statement& id) {
  const auto& text = dialect_.statements == StatementSet::kMariaDb ? id.mariadb : id.mysql;
  const std::string_view sql = text->prefix;  // a fixed text of both sets: never absent
  const std::string_view where = id.name;
  CountStatementSent();
  if (mysql_real_query(mysql_.get(), sql.data(), sql.size()) != 0) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                               "mysql_real_query(" + std::string(where) + ")",
                               mysql_error(mysql_.get())));
  }
  if (mysql_field_count(mysql_.get()) != 0) {
    // Not expected from the statements run here, but a result must be consumed to keep the
    // connection in sync.
    MysqlResPtr res{mysql_store_result(mysql_.get())};
    if (!res) {
      return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                                 "mysql_store_result(" + std::string(where) + ")",
                                 mysql_error(mysql_.get())));
    }
  }
  return {};
}

Result<void> MariaDbConnection::Ping() {
  if (mysql_ping(mysql_.get()) != 0) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()), "mysql_ping", mysql_error(mysql_.get())));
  }
  return {};
}

Result<void> MariaDbConnection::Begin() { return Run(sql::Stmt::kBegin); }
Result<void> MariaDbConnection::Commit() { return Run(sql::Stmt::kCommit); }
Result<void> MariaDbConnection::Rollback() { return Run(sql::Stmt::kRollback); }

Result<ResultRow> MariaDbConnection::QueryOneRow(const sql::Statement& id) {
  auto stmt = Prepared(id);
  if (!stmt) return Fail(stmt.error());
  if (auto done = (*stmt)->Execute({}); !done) return Fail(done.error());
  auto rows = (*stmt)->FetchAll();
  if (!rows) return Fail(rows.error());
  if (rows->size() != 1) {
    return Fail(ErrorCode::kInternal,
                std::string(id.name) + ": expected one row, got " + std::to_string(rows->size()));
  }
  return std::move((*rows)[0]);
}

Result<PreparedStatement*> MariaDbConnection::Prepared(const sql::Statement& id, size_t n) {
  const EntryKey key{&id, n};
  if (auto it = table_statements_.find(key); it != table_statements_.end()) {
    return it->second.get();
  }
  if (!InSet(id, dialect_.statements)) {
    return Fail(ErrorCode::kInternal, "statement " + std::string(id.name) + " is not in the " +
                                          StatementSetName(dialect_.statements) + " set");
  }
  auto stmt = PreparedStatement::Prepare(mysql_.get(), StatementName(id, n),
                                         StatementText(dialect_.statements, id, n));
  if (!stmt) {
    return Fail(stmt.error());
  }
  PreparedStatement* raw = stmt->get();
  table_statements_.emplace(key, std::move(*stmt));
  return raw;
}

Result<void> MariaDbConnection::PrepareNow(std::span<const sql::Statement* const> ids) {
  for (const sql::Statement* id : ids) {
    if (!InSet(*id, dialect_.statements) || id->text_protocol) {
      continue;
    }
    if (auto stmt = Prepared(*id, SizesOf(*id).front()); !stmt) {
      return Fail(stmt.error());
    }
  }
  return {};
}

Result<std::vector<MariaDbConnection::TextRow>> MariaDbConnection::QueryText(std::string_view where,
                                                                             std::string_view sql) {
  CountStatementSent();
  if (mysql_real_query(mysql_.get(), sql.data(), sql.size()) != 0) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                               "mysql_real_query(" + std::string(where) + ")",
                               mysql_error(mysql_.get())));
  }
  std::vector<TextRow> rows;
  if (mysql_field_count(mysql_.get()) == 0) {
    return rows;
  }
  MysqlResPtr res{mysql_store_result(mysql_.get())};
  if (!res) {
    return Fail(FromMysqlErrno(mysql_errno(mysql_.get()),
                               "mysql_store_result(" + std::string(where) + ")",
                               mysql_error(mysql_.get())));
  }
  const unsigned int fields = mysql_num_fields(res.get());
  while (MYSQL_ROW row = mysql_fetch_row(res.get())) {
    const unsigned long* lengths = mysql_fetch_lengths(res.get());
    TextRow& out = rows.emplace_back();
    for (unsigned int i = 0; i < fields; ++i) {
      out.push_back(row[i] == nullptr
                        ? std::nullopt
                        : std::optional<std::string>(std::in_place, row[i], lengths[i]));
    }
  }
  return rows;
}

Result<PreparedStatement*> MariaDbConnection::Prepared(std::string_view name,
                                                       std::string_view sql) {
  if (auto it = statements_.find(name); it != statements_.end()) {
    return it->second.get();
  }
  auto stmt = PreparedStatement::Prepare(mysql_.get(), std::string(name), sql);
  if (!stmt) {
    return Fail(stmt.error());
  }
  PreparedStatement* raw = stmt->get();
  statements_.emplace(std::string(name), std::move(*stmt));
  return raw;
}

Result<PreparedStatement*> MariaDbConnection::PreparedCallerStatement(std::string_view sql) {
  if (auto it = caller_statements_.find(sql); it != caller_statements_.end()) {
    return it->second.get();
  }
  auto stmt = PreparedStatement::Prepare(mysql_.get(), "caller_statement", sql);
  if (!stmt) {
    return Fail(stmt.error());
  }
  if (caller_statements_.size() >= kMaxCallerStatements) {
    caller_statements_.clear();  // a host with many texts pays the prepares it paid before
  }
  PreparedStatement* raw = stmt->get();
  caller_statements_.emplace(std::string(sql), std::move(*stmt));
  return raw;
}

Result<std::unique_ptr<PreparedStatement>> MariaDbConnection::PrepareOnce(
    const sql::Statement& id) {
  if (!InSet(id, dialect_.statements)) {
    return Fail(ErrorCode::kInternal, "statement " + std::string(id.name) + " is not in the " +
                                          StatementSetName(dialect_.statements) + " set");
  }
  return PreparedStatement::Prepare(mysql_.get(), StatementName(id, 0),
                                    StatementText(dialect_.statements, id, 0));
}

Result<std::unique_ptr<PreparedStatement>> MariaDbConnection::Prepare(std::string name,
                                                                      std::string_view sql) {
  return PreparedStatement::Prepare(mysql_.get(), std::move(name), sql);
}

uint64_t MariaDbConnection::ConnectionId() const { return mysql_thread_id(mysql_.get()); }

bool MariaDbConnection::InTransaction() const {
  unsigned int status = 0;
  if (mariadb_get_infov(mysql_.get(), MARIADB_CONNECTION_SERVER_STATUS, &status) != 0) {
    return false;
  }
  return (status & SERVER_STATUS_IN_TRANS) != 0;
}

}  // namespace room_outbox::core
