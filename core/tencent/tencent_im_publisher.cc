#include "core/tencent/tencent_im_publisher.h"

#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "core/tencent/im_endpoint.h"
#include "core/tencent/im_publisher.h"
#include "core/tencent/transfer_pool.h"

namespace room_outbox::core {
namespace {

const char kEndpointKey[] = "tencent_im.endpoint";

}  // namespace

Status CheckImCredentials(const TencentImOptions& options) {
  if (options.sdk_app_id == 0) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.sdk_app_id must be set (non-zero)"};
  }
  if (options.admin_identifier.empty()) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.admin_identifier must not be empty"};
  }
  if (options.secret_key.empty()) {
    return Error{ErrorCode::kInvalidArgument, "tencent_im.secret_key must not be empty"};
  }
  return Status();
}

namespace {

// The checks of MakeTencentImPublisher but the credentials', each naming its key.
Result<void> CheckOptions(const TencentImOptions& options) {
  if (!std::isfinite(options.requests_per_second) || options.requests_per_second < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.requests_per_second must be a finite number >= 0");
  }
  if (!std::isfinite(options.app_requests_per_second) || options.app_requests_per_second < 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.app_requests_per_second must be a finite number >= 0");
  }
  if (auto proxy = CheckImProxy(options.proxy); !proxy) {
    return Fail(proxy.error().code, "tencent_im.proxy: " + proxy.error().message);
  }
  if (options.priority_by_type.count("") != 0) {
    return Fail(ErrorCode::kInvalidArgument,
                "tencent_im.priority_by_type: an event type must not be empty");
  }
  return {};
}

// `clock` null: the publisher runs on `own_clock`.
Result<std::unique_ptr<Publisher>> MakePublisher(const TencentImOptions& options, Clock* clock,
                                                 std::unique_ptr<Clock> own_clock,
                                                 ImCredentials credentials) {
  auto endpoint = ParseImEndpoint(options.endpoint);
  if (!endpoint) {
    return Fail(ErrorCode::kInvalidArgument,
                std::string(kEndpointKey) + ": " + endpoint.error().message);
  }
  Status has_credentials = CheckImCredentials(options);
  if (credentials == ImCredentials::kRequired && !has_credentials.ok()) {
    return Fail(has_credentials.error());
  }
  if (auto checked = CheckOptions(options); !checked) {
    return Fail(checked.error());
  }
  auto pool = TransferPool::Make(kImPublisherPoolSize,
                                 std::string(endpoint->base) + std::string(kSendGroupMsgPath),
                                 options.ca_file, options.proxy);
  if (!pool) {
    return Fail(pool.error());
  }
  Clock& chosen = clock != nullptr ? *clock : *own_clock;
  return std::unique_ptr<Publisher>(std::make_unique<im::TencentImPublisher>(
      options, std::move(*endpoint), chosen, std::move(own_clock), std::move(*pool)));
}

}  // namespace

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options,
                                                          Clock& clock, ImCredentials credentials) {
  return MakePublisher(options, &clock, nullptr, credentials);
}

Result<std::unique_ptr<Publisher>> MakeTencentImPublisher(const TencentImOptions& options) {
  return MakePublisher(options, nullptr, std::make_unique<SystemClock>(), ImCredentials::kRequired);
}

}  // namespace room_outbox::core
