#include "core/mysql/dialect.h"

namespace room_outbox::core {
namespace {

std::string Dotted(uint64_t number) {
  return std::to_string(number / 10000) + "." + std::to_string(number / 100 % 100) + "." +
         std::to_string(number % 100);
}

const char* VendorName(ServerVendor vendor) {
  return vendor == ServerVendor::kMariaDb ? "MariaDB" : "MySQL";
}

}  // namespace

std::string ServerVersionText(const ServerVersion& server) {
  return std::string(VendorName(server.vendor)) + " " + Dotted(server.number);
}

const char* StatementSetName(StatementSet set) {
  return set == StatementSet::kMariaDb ? "mariadb" : "mysql";
}

ServerVersion ServerVersionOf(bool is_mariadb, uint64_t number) {
  return ServerVersion{is_mariadb ? ServerVendor::kMariaDb : ServerVendor::kMySql, number};
}

Result<Dialect> ChooseDialect(const ServerVersion& server, SqlDialect requested) {
  const uint64_t minimum =
      server.vendor == ServerVendor::kMariaDb ? kMinMariaDbVersion : kMinMySqlVersion;
  if (server.number < minimum) {
    return Fail(ErrorCode::kInvalidArgument,
                "the server is " + ServerVersionText(server) + "; room-outbox needs " +
                    ServerVersionText(ServerVersion{server.vendor, minimum}) +
                    " or later (FOR UPDATE SKIP LOCKED)");
  }
  StatementSet set =
      server.vendor == ServerVendor::kMariaDb ? StatementSet::kMariaDb : StatementSet::kMySql;
  if (requested == SqlDialect::kMariaDb) {
    set = StatementSet::kMariaDb;
  } else if (requested == SqlDialect::kMySql) {
    set = StatementSet::kMySql;
  }
  return Dialect{.server = server, .statements = set, .returning = set == StatementSet::kMariaDb};
}

}  // namespace room_outbox::core
