// MetricsServer: the metrics listener (cpp-httplib) that serves /metrics, /healthz and /readyz
// from a Metrics, GET and HEAD only, with a bounded worker pool and the listener's limits.
#include <httplib.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include "telemetry/bounded_pool.h"
#include "telemetry/health.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {

struct MetricsServer::State {
  httplib::Server server;
  std::thread thread;
};

MetricsServer::MetricsServer(std::unique_ptr<State> state, int port)
    : state_(std::move(state)), port_(port) {}

MetricsServer::~MetricsServer() {
  state_->server.stop();
  if (state_->thread.joinable()) {
    state_->thread.join();
  }
}

namespace {

struct ListenAddress {
  std::string host;
  int port = 0;
};

// "host:port" or "[v6]:port"; the key's name in the errors is metrics.listen.
core::Result<ListenAddress> ParseListen(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return core::Fail(ErrorCode::kInvalidArgument,
                      "metrics.listen \"" + listen + "\" is not host:port");
  }
  ListenAddress address;
  address.host = listen.substr(0, colon);
  if (address.host.size() > 2 && address.host.front() == '[' && address.host.back() == ']') {
    address.host = address.host.substr(1, address.host.size() - 2);
  }
  try {
    address.port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    return core::Fail(ErrorCode::kInvalidArgument, "metrics.listen \"" + listen + "\" has no port");
  }
  return address;
}

void ServeHealthz(const HealthOptions& health, httplib::Response& res) {
  if (health.heartbeat == nullptr) {
    res.set_content("ok (no worker heartbeat attached)\n", "text/plain");
    return;
  }
  const int64_t age = health.heartbeat->AgeMs();
  if (age <= health.stale_after.count()) {
    res.set_content("ok: worker loop beat " + std::to_string(age) + "ms ago\n", "text/plain");
  } else {
    res.status = 503;
    res.set_content("stale: worker loop last beat " + std::to_string(age) + "ms ago (limit " +
                        std::to_string(health.stale_after.count()) + "ms)\n",
                    "text/plain");
  }
}

void ServeReadyz(const Metrics& metrics, httplib::Response& res) {
  if (metrics.ready()) {
    res.set_content("ready\n", "text/plain");
    return;
  }
  res.status = 503;
  if (std::string reason = metrics.not_ready_reason(); !reason.empty()) {
    res.set_content("not ready: " + reason + "\n", "text/plain");
    return;
  }
  if (std::string refusal = metrics.db_read_only_refusal(); !refusal.empty()) {
    // The server's answer names it: "<statement>: database is read-only: <text> [errno N]".
    res.set_content("not ready: " + refusal + "\n", "text/plain");
    return;
  }
  std::string why = "not ready:";
  if (!metrics.db_up()) why += " database unreachable";
  if (metrics.im_breaker_open()) why += " IM breaker open";
  res.set_content(why + "\n", "text/plain");
}

// GET and HEAD only: anything else is answered 405 from the request line and headers, before
// (and without) reading a body; one request per connection, so an unread body is dropped with
// the connection instead of being parsed as the next request.
httplib::Server::HandlerResponse RefuseOtherMethods(const httplib::Request& req,
                                                    httplib::Response& res) {
  if (req.method == "GET" || req.method == "HEAD") {
    return httplib::Server::HandlerResponse::Unhandled;
  }
  res.status = 405;
  res.set_header("Allow", "GET, HEAD");
  res.set_content("method not allowed\n", "text/plain");
  return httplib::Server::HandlerResponse::Handled;
}

// The workers, once the listener is bound to `port`; each cut is counted in `metrics`.
void ServeWithBoundedPool(httplib::Server& server, int port, Metrics& metrics) {
  server.new_task_queue = [port, &metrics] {
    const auto& limits = kMetricsListenerLimits;
    return new BoundedPool(limits.workers, port, limits.connection_deadline,
                           [&metrics] { metrics.AddMetricsConnectionCut(); });
  };
}

void ApplyListenerLimits(httplib::Server& server) {
  const auto& limits = kMetricsListenerLimits;
  server.set_read_timeout(limits.read_timeout);
  server.set_write_timeout(limits.write_timeout);
  server.set_keep_alive_max_count(1);
  server.set_keep_alive_timeout(1);
  // No body is read: other methods are refused before it and cpp-httplib reads none for GET and
  // HEAD; a zero limit refuses any body that would be.
  server.set_payload_max_length(0);
  server.set_pre_routing_handler(RefuseOtherMethods);
}

}  // namespace

core::Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen,
                                                                  Metrics& metrics,
                                                                  HealthOptions health) {
  auto address = ParseListen(listen);
  if (!address) {
    return core::Fail(address.error());
  }
  auto state = std::make_unique<State>();
  // httplib's default adds SO_REUSEPORT, which would let a second relay on the same port take
  // half of the scrapes silently; SO_REUSEADDR alone makes it a bind error.
  state->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  ApplyListenerLimits(state->server);
  state->server.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.RenderPrometheus(), "text/plain; version=0.0.4; charset=utf-8");
  });
  state->server.Get("/healthz", [health](const httplib::Request&, httplib::Response& res) {
    ServeHealthz(health, res);
  });
  state->server.Get("/readyz", [&metrics](const httplib::Request&, httplib::Response& res) {
    ServeReadyz(metrics, res);
  });
  const char* host = address->host.c_str();
  const int bound = address->port == 0
                        ? state->server.bind_to_any_port(host)
                        : (state->server.bind_to_port(host, address->port) ? address->port : -1);
  if (bound < 0) {
    return core::Fail(ErrorCode::kUnavailable, "metrics: cannot listen on " + listen);
  }
  ServeWithBoundedPool(state->server, bound, metrics);
  State* raw = state.get();
  raw->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the server runs: a server stopped before its thread reached
  // the accept loop would then listen forever and the destructor's join would hang. Wait for it
  // (real time: httplib offers nothing to wait on).
  for (int i = 0; i < 5000 && !raw->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(state), bound));
}

}  // namespace room_outbox::relay
