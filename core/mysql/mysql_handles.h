// Owning pointers for the MariaDB Connector/C handles. Each deleter is a stateless functor so the
// pointer stays the size of a raw pointer and mysql_stmt_close's my_bool result can be dropped.
#pragma once

#include <mysql.h>

#include <memory>

namespace room_outbox::core {

struct MysqlCloser {
  void operator()(MYSQL* mysql) const noexcept { mysql_close(mysql); }
};

struct MysqlStmtCloser {
  // Closing only fails when the server is gone; the client-side memory is freed regardless.
  void operator()(MYSQL_STMT* stmt) const noexcept { (void)mysql_stmt_close(stmt); }
};

struct MysqlResFreer {
  void operator()(MYSQL_RES* res) const noexcept { mysql_free_result(res); }
};

using MysqlPtr = std::unique_ptr<MYSQL, MysqlCloser>;
using MysqlStmtPtr = std::unique_ptr<MYSQL_STMT, MysqlStmtCloser>;
using MysqlResPtr = std::unique_ptr<MYSQL_RES, MysqlResFreer>;

}  // namespace room_outbox::core
