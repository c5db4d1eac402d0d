// CreateHook: the hook over the MariaDB store and the Tencent IM publisher.
#include <memory>
#include <string>
#include <utility>

#include "app_budget_membership.h"
#include "core/mysql/connect_options.h"
#include "core/tencent/tencent_im_publisher.h"
#include "core/wake_path.h"
#include "hook_impl.h"
#include "store/mariadb_hook_store.h"

namespace room_outbox {

namespace {

// The background publisher's own connection and HTTP client (kBackground only), on the Hook's
// clock.
core::Result<internal::BackgroundParts> MakeBackgroundParts(const HookOptions& options,
                                                            core::Clock& clock) {
  internal::BackgroundParts parts;
  if (options.sync_publish != SyncPublishMode::kBackground) {
    return parts;
  }
  auto publisher = core::MakeTencentImPublisher(options.tencent_im, clock);
  if (!publisher) {
    return core::Fail(publisher.error());
  }
  auto store = internal::MakeMariaDbHookStore(options.mysql, clock);
  if (auto connected = store->Connect(); !connected) {
    return core::Fail(connected.error());
  }
  parts.store = std::move(store);
  parts.publisher = std::move(*publisher);
  return parts;
}

// The TLS warning about the database link (core/mysql/connect_options.h), through the host's log.
void WarnAboutTheLink(const HookOptions& options) {
  if (!options.log) {
    return;
  }
  if (std::string warning = core::TlsExposureWarning(options.mysql); !warning.empty()) {
    options.log(LogLevel::kWarn, "configuration warning: " + warning);
  }
}

}  // namespace

std::unique_ptr<Hook> CreateHook(const HookOptions& options, Error* error) {
  auto fail = [error](Error e) -> std::unique_ptr<Hook> {
    if (error != nullptr) {
      *error = std::move(e);
    }
    return nullptr;
  };
  if (std::string bad = core::CheckWakeSocketPath(options.wake_socket); !bad.empty()) {
    return fail(Error{ErrorCode::kInvalidArgument, "HookOptions::wake_socket: " + bad});
  }
  if (options.tencent_im.pack_max_events > kMaxPackEvents) {
    return fail(Error{ErrorCode::kInvalidArgument,
                      "tencent_im.pack_max_events must be 0.." + std::to_string(kMaxPackEvents) +
                          " (0 means 1), got " +
                          std::to_string(options.tencent_im.pack_max_events)});
  }
  WarnAboutTheLink(options);
  // The Hook's one clock: the store takes lease_start_ms from it and the Hook measures the
  // command's deadline on it. It moves into the Hook, which keeps it until everything built on
  // it is gone.
  auto clock = std::make_unique<core::SystemClock>();
  // A hook that never sends (sync_publish off) needs no IM credentials: its publisher only says
  // which event types are sent (skip_event_types), and the relay sends.
  const core::ImCredentials credentials = options.sync_publish == SyncPublishMode::kOff
                                              ? core::ImCredentials::kNotUsed
                                              : core::ImCredentials::kRequired;
  auto publisher = core::MakeTencentImPublisher(options.tencent_im, *clock, credentials);
  if (!publisher) {
    return fail(publisher.error());
  }
  auto store = internal::MakeMariaDbHookStore(options.mysql, *clock);
  // Fail fast: a room-service that cannot reach its database should know at startup.
  if (auto connected = store->Connect(); !connected) {
    return fail(connected.error());
  }
  auto background = MakeBackgroundParts(options, *clock);
  if (!background) {
    return fail(background.error());
  }
  // One sync breaker for every Hook of the process aimed at this IM app (sync_breaker.h).
  return internal::MakeHook(
      options, std::move(store), std::move(*publisher), std::move(clock),
      internal::ProcessSyncBreaker(options.tencent_im.endpoint, options.tencent_im.sdk_app_id),
      std::move(*background), internal::JoinAppBudget(options));
}

}  // namespace room_outbox
