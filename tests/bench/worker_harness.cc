#include "bench/worker_harness.h"

#include <utility>

#include "bench/bench_support.h"
#include "config/config.h"
#include "core/tencent/tencent_im_publisher.h"
#include "daemon/wake_socket.h"

namespace room_outbox::bench {

WorkerHarness::WorkerHarness(const MysqlOptions& mysql, const TencentImOptions& im,
                             relay::WorkerOptions options, bool claim_ahead)
    : options_(std::move(options)),
      store_(relay::MakeMariaDbRelayStore(mysql)),
      ahead_store_(claim_ahead ? relay::MakeMariaDbRelayStore(mysql) : nullptr),
      publisher_(Unwrap(core::MakeTencentImPublisher(im), "MakeTencentImPublisher")),
      logger_(relay::MakeStreamLogger(discard_, relay::LogFormat::kText, spdlog::level::info)) {
  options_.skip_event_types = im.skip_event_types;
  Unwrap(store_->Connect(), "connecting the relay's store");
  if (ahead_store_) Unwrap(ahead_store_->Connect(), "connecting the relay's claim-ahead store");
  worker_ = std::make_unique<relay::OutboxWorker>(options_, *store_, *publisher_, clock_, stop_,
                                                  metrics_, *logger_, nullptr, ahead_store_.get());
}

WorkerHarness::~WorkerHarness() { Stop(); }

void WorkerHarness::Start() {
  thread_ = std::thread([this] { worker_->Run(); });
}

void WorkerHarness::Stop() {
  stop_.RequestStop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

bool WorkerHarness::WaitForPublished(size_t rows, std::chrono::milliseconds limit) const {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (metrics_.publish_success() < rows) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

relay::WorkerOptions DefaultWorkerOptions() {
  return relay::ToWorkerOptions(relay::WorkerConfig{}, "bench-node");
}

std::string DescribeSettings(const relay::WorkerOptions& options, double requests_per_second) {
  return "max_in_flight=" + std::to_string(options.max_in_flight) +
         ", ordering=" + (options.per_room_order() ? "per_room" : "none") +
         ", batch_size=" + std::to_string(options.batch_size) +
         ", room_min_interval=" + std::to_string(options.room_min_interval.count()) + "ms" +
         ", poll_interval=" + std::to_string(options.poll_interval.count()) + "ms" +
         ", requests_per_second=" + FormatFixed(requests_per_second, 0);
}

std::unique_ptr<relay::WakeListener> ListenForWakes(const std::string& what,
                                                    const std::string& path, WorkerHarness& relay,
                                                    std::atomic<uint64_t>& datagrams) {
  auto listener =
      relay::WakeSocket::Bind(path, relay::kDefaultWakeSocketMode).and_then([&](auto socket) {
        return relay::WakeListener::Start(
            std::move(socket),
            [&datagrams, &relay](uint64_t count) {
              datagrams += count;
              relay.Wake();
            },
            relay.logger(), relay::kDefaultWakeMinInterval);
      });
  if (!listener) {
    throw BenchFailure(what + ": wake socket: " + listener.error().message);
  }
  return std::move(*listener);
}

std::string ShippedRoomMinInterval() {
  return std::to_string(relay::WorkerConfig{}.room_min_interval.count()) + "ms";
}

}  // namespace room_outbox::bench
