// Both sides' MariaDB stores on one database: the hook's, which writes rows as a Commit does,
// and the relay's, which claims and marks them. For tests of the relay's store that need rows.
#pragma once

#include <memory>

#include "room_outbox/options.h"
#include "store/mariadb_hook_store.h"
#include "store/mariadb_relay_store.h"

namespace room_outbox::testing {

struct TestStores {
  explicit TestStores(const MysqlOptions& options) : hook(options), relay(options) {}
  internal::MariaDbHookStore hook;
  relay::MariaDbRelayStore relay;
};

inline std::unique_ptr<TestStores> MakeTestStores(const MysqlOptions& options) {
  return std::make_unique<TestStores>(options);
}

}  // namespace room_outbox::testing
