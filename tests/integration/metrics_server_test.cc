#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

#include "core/fd.h"
#include "telemetry/metrics.h"

// The /metrics endpoint over a real loopback socket.
namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Steady = std::chrono::steady_clock;

// A raw client connection to 127.0.0.1:`port` that has sent `request` (possibly partial).
core::Fd ConnectAndSend(int port, const std::string& request) {
  core::Fd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (!fd || ::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return {};
  if (::send(fd.get(), request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    return {};
  }
  return fd;
}

// Everything the server sends on `fd` until it closes the connection or `limit` passes; `closed`
// tells which.
std::string ReadUntilClosed(int fd, milliseconds limit, bool* closed) {
  std::string got;
  const auto deadline = Steady::now() + limit;
  *closed = false;
  for (;;) {
    const auto left = std::chrono::duration_cast<milliseconds>(deadline - Steady::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, static_cast<int>(left)) <= 0) return got;
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) {
      *closed = true;
      return got;
    }
    got.append(buf, static_cast<size_t>(n));
  }
}

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

// Only GET and HEAD are served; anything else is refused from its request line and headers: a
// POST announcing a gigabyte it never sends is answered 405 at once, not read (or waited for).
TEST(MetricsServerTest, ServerRefusesOtherMethodsWithoutReadingTheBody) {
  Metrics m;
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  core::Fd post = ConnectAndSend(
      port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n");
  ASSERT_TRUE(post);
  bool closed = false;
  const std::string answer = ReadUntilClosed(post.get(), milliseconds(15000), &closed);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 405"));
  EXPECT_THAT(answer, HasSubstr("Allow: GET, HEAD"));
  EXPECT_TRUE(closed) << "the connection stays open after a refused request";

  httplib::Client client("127.0.0.1", port);
  auto put = client.Put("/healthz", "x", "text/plain");
  ASSERT_TRUE(put);
  EXPECT_EQ(put->status, 405);
  auto del = client.Delete("/metrics");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 405);
  auto head = client.Head("/healthz");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
}

// Slow clients (a partial request, then nothing) on every worker and one more waiting: each is
// dropped after the read timeout, and /healthz, queued behind them, is answered within about
// that time (httplib's defaults held them 5 s with 8 workers, so a probe of a few seconds failed).
TEST(MetricsServerTest, HealthzIsAnsweredWhileSlowClientsHoldEveryWorker) {
  Metrics m;
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  const auto& limits = kMetricsListenerLimits;
  std::vector<core::Fd> slow;
  for (size_t i = 0; i < limits.workers + 1; ++i) {
    slow.push_back(ConnectAndSend(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n"));
    ASSERT_TRUE(slow.back()) << "slow connection " << i;
  }
  // Connections are accepted and served in the order they were made: this one waits behind all
  // of the slow ones.
  const auto start = Steady::now();
  core::Fd probe = ConnectAndSend(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(probe);
  bool closed = false;
  // Margin for a busy 2-core machine: twice the read timeout and 1.5 s, still below the 5 s
  // httplib holds a silent client by default.
  const milliseconds limit = 2 * limits.read_timeout + milliseconds(1500);
  const std::string answer = ReadUntilClosed(probe.get(), limit, &closed);
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - start);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200")) << "after " << took.count() << " ms";
  EXPECT_THAT(answer, HasSubstr("ok"));
  for (size_t i = 0; i < slow.size(); ++i) {
    (void)ReadUntilClosed(slow[i].get(), limit, &closed);
    EXPECT_TRUE(closed) << "slow connection " << i << " still open";
  }
}

}  // namespace
}  // namespace room_outbox::relay
