// The lifecycle lines of outbox-relay: every duration is an integer field named <name>_ms.
#include "daemon/lifecycle_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(LifecycleLogTest, TheStartingLineCarriesEveryDurationAsAnIntegerInMilliseconds) {
  Config config;
  config.node_id = "node-a";
  config.path = "/etc/room-outbox/relay.toml";
  config.outbox_worker.poll_interval = milliseconds(1500);
  config.outbox_worker.publish_timeout = milliseconds(3000);
  config.outbox_worker.lease = milliseconds(120000);
  config.outbox_worker.room_min_interval = milliseconds(50);
  const std::string text = StartingLine(config, false).Render(LogFormat::kText);
  EXPECT_THAT(text, HasSubstr("outbox-relay starting worker=room_outbox node_id=node-a "));
  EXPECT_THAT(text, HasSubstr(" mode=daemon poll_interval_ms=1500 batch_size=100 "
                              "publish_timeout_ms=3000 "));
  EXPECT_THAT(text, HasSubstr(" lease_ms=120000 room_min_interval_ms=50 "));
  EXPECT_THAT(text, Not(HasSubstr("\"1500ms\"")));
  EXPECT_THAT(text, Not(HasSubstr("=\"3s\"")));
  // In JSON they are numbers.
  const std::string json = StartingLine(config, true).Render(LogFormat::kJson);
  EXPECT_THAT(json, HasSubstr(R"("mode":"once","poll_interval_ms":1500,)"));
  EXPECT_THAT(json, HasSubstr(R"("lease_ms":120000,"room_min_interval_ms":50,)"));
}

}  // namespace
}  // namespace room_outbox::relay
