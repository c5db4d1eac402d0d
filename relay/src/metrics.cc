#include "metrics.h"

#include <httplib.h>

#include <sstream>
#include <thread>

namespace room_outbox::relay {

void Metrics::ObservePublishLatency(int64_t latency_ms) {
  if (latency_ms < 0) {
    latency_ms = 0;
  }
  size_t i = 0;
  while (i < kLatencyBucketsMs.size() && latency_ms > kLatencyBucketsMs[i]) {
    ++i;
  }
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  latency_sum_ms_.fetch_add(latency_ms, std::memory_order_relaxed);
  latency_count_.fetch_add(1, std::memory_order_relaxed);
}

void Metrics::SetPending(int64_t pending, int64_t oldest_pending_age_ms) {
  pending_.store(pending, std::memory_order_relaxed);
  oldest_age_ms_.store(oldest_pending_age_ms, std::memory_order_relaxed);
}

void Metrics::AddRound(bool failed) {
  rounds_.fetch_add(1, std::memory_order_relaxed);
  if (failed) {
    round_errors_.fetch_add(1, std::memory_order_relaxed);
  }
}

std::string Metrics::RenderPrometheus() const {
  std::ostringstream o;
  auto simple = [&o](const char* name, const char* type, const char* help, auto value) {
    o << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n'
      << name << ' ' << value << '\n';
  };
  simple("room_outbox_pending_total", "gauge", "Pending rows in room_outbox.", pending());
  simple("room_outbox_oldest_pending_age_ms", "gauge",
         "Age in milliseconds of the oldest pending row (0 when none).", oldest_pending_age_ms());
  simple("room_outbox_publish_success_total", "counter",
         "Rows delivered to Tencent IM or skipped as non-IM types.", publish_success());
  simple("room_outbox_publish_failure_total", "counter",
         "Failed delivery attempts (the row stays pending).", publish_failure());
  simple("room_outbox_rooms_held_back", "gauge",
         "Rooms whose later rows wait behind a failed row.", rooms_held_back());
  simple("room_outbox_rounds_total", "counter", "Claim rounds run.",
         rounds_.load(std::memory_order_relaxed));
  simple("room_outbox_round_errors_total", "counter",
         "Rounds that ended with a database error or an undecodable envelope.",
         round_errors_.load(std::memory_order_relaxed));

  const char* h = "room_outbox_publish_latency_ms";
  o << "# HELP " << h << " Latency of each publish attempt in milliseconds.\n"
    << "# TYPE " << h << " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kLatencyBucketsMs.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    o << h << "_bucket{le=\"" << kLatencyBucketsMs[i] << "\"} " << cumulative << '\n';
  }
  cumulative += buckets_[kLatencyBucketsMs.size()].load(std::memory_order_relaxed);
  o << h << "_bucket{le=\"+Inf\"} " << cumulative << '\n'
    << h << "_sum " << latency_sum_ms_.load(std::memory_order_relaxed) << '\n'
    << h << "_count " << latency_count() << '\n';
  return o.str();
}

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

Result<std::unique_ptr<MetricsServer>> MetricsServer::Start(const std::string& listen,
                                                            const Metrics& metrics) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos) {
    return Fail(ErrorCode::kInvalidArgument, "metrics.listen \"" + listen + "\" is not host:port");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  int port = 0;
  try {
    port = std::stoi(listen.substr(colon + 1));
  } catch (const std::exception&) {
    return Fail(ErrorCode::kInvalidArgument, "metrics.listen \"" + listen + "\" has no port");
  }
  auto state = std::make_unique<State>();
  // httplib's default adds SO_REUSEPORT, which would let a second relay on the same port take
  // half of the scrapes silently; SO_REUSEADDR alone makes it a bind error.
  state->server.set_socket_options([](socket_t sock) {
    int yes = 1;
    (void)setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  state->server.Get("/metrics", [&metrics](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics.RenderPrometheus(), "text/plain; version=0.0.4; charset=utf-8");
  });
  const int bound = port == 0 ? state->server.bind_to_any_port(host.c_str())
                              : (state->server.bind_to_port(host.c_str(), port) ? port : -1);
  if (bound < 0) {
    return Fail(ErrorCode::kUnavailable, "metrics: cannot listen on " + listen);
  }
  State* raw = state.get();
  raw->thread = std::thread([raw] { raw->server.listen_after_bind(); });
  // httplib's stop() is a no-op until the server runs: a server stopped before its thread reached
  // the accept loop would then listen forever and the destructor's join would hang. Wait for it.
  for (int i = 0; i < 5000 && !raw->server.is_running(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(state), bound));
}

}  // namespace room_outbox::relay
