// /healthz and /readyz of the metrics listener over a real loopback socket.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "fake_clock.h"
#include "telemetry/health.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;

TEST(HealthEndpointsTest, HealthzFollowsTheHeartbeat) {
  testing::FakeClock clock;
  Metrics m(clock);
  Heartbeat heartbeat(clock);
  heartbeat.Beat();
  auto server =
      MetricsServer::Start("127.0.0.1:0", m, HealthOptions{&heartbeat, std::chrono::seconds(60)});
  ASSERT_TRUE(server) << server.error().message;
  httplib::Client client("127.0.0.1", (*server)->port());
  auto fresh = client.Get("/healthz");
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->status, 200);
  EXPECT_THAT(fresh->body, HasSubstr("ok"));
  clock.Advance(std::chrono::seconds(61));  // the loop has not beaten for over a minute
  auto stale = client.Get("/healthz");
  ASSERT_TRUE(stale);
  EXPECT_EQ(stale->status, 503);
  EXPECT_THAT(stale->body, HasSubstr("stale"));
  heartbeat.Beat();
  EXPECT_EQ(client.Get("/healthz")->status, 200);
}

TEST(HealthEndpointsTest, ReadyzNeedsTheDatabaseAndAClosedBreaker) {
  Metrics m;
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  httplib::Client client("127.0.0.1", (*server)->port());
  auto down = client.Get("/readyz");
  ASSERT_TRUE(down);
  EXPECT_EQ(down->status, 503);
  EXPECT_THAT(down->body, HasSubstr("database unreachable"));
  m.SetDbUp(true);
  EXPECT_EQ(client.Get("/readyz")->status, 200);
  m.SetImBreakerOpen(true);
  auto breaker = client.Get("/readyz");
  EXPECT_EQ(breaker->status, 503);
  EXPECT_THAT(breaker->body, HasSubstr("IM breaker open"));
  EXPECT_EQ(client.Get("/healthz")->status, 200) << "no heartbeat attached: nothing to judge";
}

}  // namespace
}  // namespace room_outbox::relay
