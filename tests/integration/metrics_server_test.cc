#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
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

// A client that sends "GET /healthz HTTP/1.1\r\n" and then one header byte every `interval` (well
// inside the read timeout, so it is never dropped for silence) until the server closes the
// connection or `limit` passes. `connected` is set once its connect returned (false: it failed).
// The time from just before its connect to the server's close; nullopt while still open at
// `limit`.
std::optional<milliseconds> Trickle(int port, milliseconds interval, milliseconds limit,
                                    std::promise<bool>& connected) {
  const auto start = Steady::now();
  core::Fd fd = ConnectAndSend(port, "GET /healthz HTTP/1.1\r\n");
  connected.set_value(static_cast<bool>(fd));
  if (!fd) return std::nullopt;
  const auto give_up = start + limit;
  for (;;) {
    const auto now = Steady::now();
    if (now >= give_up) return std::nullopt;
    const auto wait = std::min(interval, std::chrono::duration_cast<milliseconds>(give_up - now));
    pollfd p{fd.get(), POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(wait.count())) == 0) {
      (void)::send(fd.get(), "a", 1, MSG_NOSIGNAL);  // refused once closed: poll then tells
      continue;
    }
    char buf[512];
    if (::recv(fd.get(), buf, sizeof(buf), 0) <= 0) {
      return std::chrono::duration_cast<milliseconds>(Steady::now() - start);
    }
  }
}

// A Trickle on a thread of its own (so a connect the kernel delays holds up no other client).
struct Trickler {
  std::future<bool> connected;
  std::future<std::optional<milliseconds>> closed_after;  // its destructor waits for the end
};

Trickler StartTrickler(int port, milliseconds interval, milliseconds limit) {
  auto connected = std::make_shared<std::promise<bool>>();
  Trickler trickler{connected->get_future(), {}};
  trickler.closed_after = std::async(std::launch::async, [=] {
    return Trickle(port, interval, limit, *connected);
  });
  return trickler;
}

// The sockets this process has accepted on local port `port` and still holds (the server under
// test runs in this process; a descriptor and its duplicates count once).
size_t AcceptedSockets(int port) {
  std::set<ino_t> sockets;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    const int fd = std::atoi(entry.path().filename().c_str());
    struct stat st {};
    sockaddr_in local{};
    socklen_t len = sizeof(local);
    int listening = 1;
    socklen_t option_len = sizeof(listening);
    if (::fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode) ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) != 0 ||
        local.sin_family != AF_INET || ntohs(local.sin_port) != port ||
        ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &option_len) != 0 || listening) {
      continue;
    }
    sockets.insert(st.st_ino);
  }
  return sockets.size();
}

// Waits until the server has accepted `count` connections on `port`, or `limit` passes.
bool WaitAccepted(int port, size_t count, milliseconds limit) {
  const auto give_up = Steady::now() + limit;
  while (AcceptedSockets(port) < count) {
    if (Steady::now() >= give_up) return false;
    std::this_thread::sleep_for(milliseconds(5));  // httplib offers no event to wait on
  }
  return true;
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

// Clients that keep every worker busy by sending a byte of their headers well before each read
// timeout would pass are shut down at the connection deadline, so a /healthz waiting behind them
// is answered within about that long (without the deadline they held their workers for as long
// as they kept sending, and the probe was never answered).
TEST(MetricsServerTest, HealthzIsAnsweredWhileTricklingClientsHoldEveryWorker) {
  Metrics m;
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  const auto& limits = kMetricsListenerLimits;
  const milliseconds margin(2000);  // a busy 2-core machine
  std::vector<Trickler> tricklers;
  for (size_t i = 0; i < limits.workers; ++i) {
    tricklers.push_back(StartTrickler(port, limits.read_timeout / 4,
                                      limits.connection_deadline + 2 * margin));
  }
  for (size_t i = 0; i < tricklers.size(); ++i) {
    ASSERT_TRUE(tricklers[i].connected.get()) << "trickler " << i;
  }
  // Every worker holds one of them; the probe, accepted next, waits for a worker.
  ASSERT_TRUE(WaitAccepted(port, limits.workers, margin)) << AcceptedSockets(port) << " accepted";
  const auto start = Steady::now();
  core::Fd probe = ConnectAndSend(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_TRUE(probe);
  bool closed = false;
  const std::string answer =
      ReadUntilClosed(probe.get(), limits.connection_deadline + margin, &closed);
  const auto took = std::chrono::duration_cast<milliseconds>(Steady::now() - start);
  EXPECT_THAT(answer, StartsWith("HTTP/1.1 200")) << "after " << took.count() << " ms";
  EXPECT_THAT(answer, HasSubstr("ok"));
  for (size_t i = 0; i < tricklers.size(); ++i) {
    EXPECT_TRUE(tricklers[i].closed_after.get()) << "trickler " << i << " still open";
  }
  // Each was cut, unless a busy machine kept its thread from sending for a whole read timeout
  // (then the read timeout dropped it, as it should).
  EXPECT_GE(m.metrics_connections_cut(), 1u);
}

// A trickling client is closed by the server once the connection deadline has passed, not
// before, and the cut is counted. Normal scrapes first, so the descriptor numbers it may get have
// been used and closed before.
TEST(MetricsServerTest, ATricklingClientIsClosedAtTheConnectionDeadline) {
  Metrics m;
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  httplib::Client client("127.0.0.1", port);
  for (int i = 0; i < 3; ++i) {
    auto res = client.Get("/metrics");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
  }
  const auto& limits = kMetricsListenerLimits;
  const milliseconds margin(2000);  // a busy 2-core machine
  Trickler trickler =
      StartTrickler(port, limits.read_timeout / 4, limits.connection_deadline + margin);
  ASSERT_TRUE(trickler.connected.get());
  const std::optional<milliseconds> closed_after = trickler.closed_after.get();
  ASSERT_TRUE(closed_after) << "still open " << margin.count() << " ms after the deadline";
  // The deadline runs from when a worker took the connection, which is after the connect began.
  EXPECT_GE(*closed_after, limits.connection_deadline);
  EXPECT_EQ(m.metrics_connections_cut(), 1u);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_THAT(res->body, HasSubstr("\nroom_outbox_metrics_connections_cut_total 1\n"));
}

// Normal clients are not cut: scrapes of a large /metrics (about 250 KB), as many at once as
// there are workers, each answered whole, and none counted as cut.
TEST(MetricsServerTest, ScrapesOfALargeMetricsAreNotCut) {
  Metrics m;
  std::map<std::string, std::chrono::seconds> max_age_by_type;
  for (int i = 0; i < 5000; ++i) {
    char type[32];
    std::snprintf(type, sizeof(type), "event_type_%05d", i);
    max_age_by_type.emplace(type, std::chrono::seconds(60));
  }
  m.DeclareExpiredTypes(max_age_by_type);
  auto server = MetricsServer::Start("127.0.0.1:0", m);
  ASSERT_TRUE(server) << server.error().message;
  const int port = (*server)->port();
  const size_t scrapers = kMetricsListenerLimits.workers;
  std::vector<int> complete(scrapers, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < scrapers; ++i) {
    threads.emplace_back([port, &done = complete[i]] {
      httplib::Client client("127.0.0.1", port);
      for (int k = 0; k < 3; ++k) {
        auto res = client.Get("/metrics");
        if (res && res->status == 200 && res->body.size() > 250000 &&
            res->body.find("{event_type=\"event_type_04999\"} 0\n") != std::string::npos) {
          ++done;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (size_t i = 0; i < scrapers; ++i) EXPECT_EQ(complete[i], 3) << "scraper " << i;
  EXPECT_EQ(m.metrics_connections_cut(), 0u);
}

}  // namespace
}  // namespace room_outbox::relay
