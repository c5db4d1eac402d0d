// CreateHook: the hook over the MariaDB store and the Tencent IM publisher.
#include <memory>
#include <string>
#include <utility>

#include "core/tencent/tencent_im_publisher.h"
#include "core/wake_path.h"
#include "hook_impl.h"
#include "mysql/mariadb_hook_store.h"

namespace room_outbox {

namespace {

// The background publisher's own connection and HTTP client (kBackground only).
Result<internal::BackgroundParts> MakeBackgroundParts(const HookOptions& options) {
  internal::BackgroundParts parts;
  if (options.sync_publish != SyncPublishMode::kBackground) {
    return parts;
  }
  auto publisher = MakeTencentImPublisher(options.tencent_im);
  if (!publisher) {
    return Fail(publisher.error());
  }
  auto store = MakeMariaDbHookStore(options.mysql);
  if (auto connected = store->Connect(); !connected) {
    return Fail(connected.error());
  }
  parts.store = std::move(store);
  parts.publisher = std::move(*publisher);
  return parts;
}

}  // namespace

std::unique_ptr<Hook> CreateHook(const HookOptions& options, Error* error) {
  auto fail = [error](Error e) -> std::unique_ptr<Hook> {
    if (error != nullptr) {
      *error = std::move(e);
    }
    return nullptr;
  };
  if (std::string bad = CheckWakeSocketPath(options.wake_socket); !bad.empty()) {
    return fail(Error{ErrorCode::kInvalidArgument, "HookOptions::wake_socket: " + bad});
  }
  auto publisher = MakeTencentImPublisher(options.tencent_im);
  if (!publisher) {
    return fail(publisher.error());
  }
  auto store = MakeMariaDbHookStore(options.mysql);
  // Fail fast: a room-service that cannot reach its database should know at startup.
  if (auto connected = store->Connect(); !connected) {
    return fail(connected.error());
  }
  auto background = MakeBackgroundParts(options);
  if (!background) {
    return fail(background.error());
  }
  // One sync breaker for every Hook of the process aimed at this IM app (sync_breaker.h).
  return internal::MakeHook(
      options, std::move(store), std::move(*publisher), std::make_unique<SystemClock>(),
      internal::ProcessSyncBreaker(options.tencent_im.endpoint, options.tencent_im.sdk_app_id),
      std::move(*background));
}

}  // namespace room_outbox
