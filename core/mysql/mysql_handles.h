// Owning pointers for the MariaDB Connector/C handles. Each deleter is a stateless functor so the
// pointer stays the size of a raw pointer and mysql_stmt_close's my_bool result can be dropped.
#pragma once

#include <mysql.h>
#include <openssl/crypto.h>

#include <cstring>
#include <memory>

namespace room_outbox::core {

// Connector/C keeps its own copy of the password (MYSQL::passwd, strdup at connect, for a
// reconnect) and frees it unwiped: the closer wipes it first. A connect that fails frees that
// copy inside the library, out of reach.
struct MysqlCloser {
  void operator()(MYSQL* mysql) const noexcept {
    if (mysql->passwd != nullptr) {
      OPENSSL_cleanse(mysql->passwd, std::strlen(mysql->passwd));
    }
    mysql_close(mysql);
  }
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
