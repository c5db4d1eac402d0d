#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "telemetry/metrics.h"

// The /metrics endpoint over a real loopback socket.
namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;

TEST(MetricsServerTest, ServerAnswersGetMetrics) {
  Metrics m;
  m.AddPublishSuccess(7);
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  httplib::Client client("127.0.0.1", (*server)->port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_THAT(res->body, HasSubstr("room_outbox_publish_success_total 7\n"));
  EXPECT_THAT(res->get_header_value("Content-Type"), HasSubstr("text/plain"));
  auto missing = client.Get("/other");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

TEST(MetricsServerTest, ServerReportsAnAddressItCannotBind) {
  Metrics m;
  auto first = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(first) << first.error().message;
  auto second = MetricsServer::Start("127.0.0.1:" + std::to_string((*first)->port()), m);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().code, ErrorCode::kUnavailable);
}

TEST(MetricsServerTest, ServerReportsAnAddressThatIsNotLocal) {
  Metrics m;
  // 192.0.2.0/24 is TEST-NET-1: never an address of this machine.
  auto server = MetricsServer::Start("192.0.2.1:9464", m);
  ASSERT_FALSE(server);
  EXPECT_THAT(server.error().message, HasSubstr("192.0.2.1:9464"));
}

}  // namespace
}  // namespace room_outbox::relay
