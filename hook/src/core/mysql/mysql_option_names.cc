// The config spellings of MysqlOptions::dialect and MysqlOptions::ssl_mode.
#include <optional>
#include <string_view>

#include "room_outbox/options.h"

namespace room_outbox {

const char* SqlDialectName(SqlDialect dialect) {
  switch (dialect) {
    case SqlDialect::kAuto:
      return "auto";
    case SqlDialect::kMariaDb:
      return "mariadb";
    case SqlDialect::kMySql:
      return "mysql";
  }
  return "auto";
}

std::optional<SqlDialect> ParseSqlDialect(std::string_view name) {
  for (SqlDialect dialect : {SqlDialect::kAuto, SqlDialect::kMariaDb, SqlDialect::kMySql}) {
    if (name == SqlDialectName(dialect)) {
      return dialect;
    }
  }
  return std::nullopt;
}

const char* SslModeName(SslMode mode) {
  switch (mode) {
    case SslMode::kDisabled:
      return "disabled";
    case SslMode::kPreferred:
      return "preferred";
    case SslMode::kRequired:
      return "required";
    case SslMode::kVerifyCa:
      return "verify_ca";
    case SslMode::kVerifyIdentity:
      return "verify_identity";
  }
  return "preferred";
}

std::optional<SslMode> ParseSslMode(std::string_view name) {
  for (SslMode mode : {SslMode::kDisabled, SslMode::kPreferred, SslMode::kRequired,
                       SslMode::kVerifyCa, SslMode::kVerifyIdentity}) {
    if (name == SslModeName(mode)) {
      return mode;
    }
  }
  return std::nullopt;
}

}  // namespace room_outbox
