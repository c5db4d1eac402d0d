#include "hook_options_defaults.h"

#include "core/host_name.h"
#include "core/wipe.h"

namespace room_outbox::internal {

HookOptions WithDefaults(const HookOptions& given) {
  HookOptions options = given;
  core::WipeSecrets(options.mysql);
  core::WipeSecrets(options.tencent_im);
  if (options.sync_publish_timeout.count() <= 0) {
    options.sync_publish_timeout = kDefaultSyncPublishTimeout;
  }
  if (options.tencent_im.max_body_bytes == 0) {
    options.tencent_im.max_body_bytes = kDefaultMaxBodyBytes;
  }
  if (options.tencent_im.pack_max_events == 0) {
    options.tencent_im.pack_max_events = kDefaultPackMaxEvents;
  }
  if (options.node_id.empty()) {
    options.node_id = core::HostName();
  }
  if (options.background_queue == 0) {
    options.background_queue = kDefaultBackgroundQueue;
  }
  return options;
}

}  // namespace room_outbox::internal
