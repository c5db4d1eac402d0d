// CreateHook: the hook over the MariaDB store and the Tencent IM publisher.
#include <memory>

#include "hook_impl.h"
#include "mysql/mariadb_outbox_store.h"
#include "tencent/tencent_im_publisher.h"

namespace room_outbox {

std::unique_ptr<Hook> CreateHook(const HookOptions& options, Error* error) {
  auto fail = [error](Error e) -> std::unique_ptr<Hook> {
    if (error != nullptr) {
      *error = std::move(e);
    }
    return nullptr;
  };
  auto publisher = MakeTencentImPublisher(options.tencent_im);
  if (!publisher) {
    return fail(publisher.error());
  }
  auto store = MakeMariaDbOutboxStore(options.mysql);
  // Fail fast: a room-service that cannot reach its database should know at startup.
  if (auto connected = store->Connect(); !connected) {
    return fail(connected.error());
  }
  // One sync breaker for every Hook of the process aimed at this IM app (sync_breaker.h).
  return internal::MakeHook(
      options, std::move(store), std::move(*publisher), std::make_unique<SystemClock>(),
      internal::ProcessSyncBreaker(options.tencent_im.endpoint, options.tencent_im.sdk_app_id));
}

}  // namespace room_outbox
