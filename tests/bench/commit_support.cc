#include "bench/commit_support.h"

#include "bench/bench_database.h"
#include "bench/bench_support.h"

namespace room_outbox::bench {

Latency Summarize(const std::vector<double>& samples_ms) {
  return Latency{Percentile(samples_ms, 50), Percentile(samples_ms, 99), samples_ms.size()};
}

std::string LatencyText(const Latency& l) {
  return "p50 " + FormatFixed(l.p50, 3) + " ms, p99 " + FormatFixed(l.p99, 3) + " ms (" +
         FormatCount(static_cast<double>(l.samples)) + " samples)";
}

namespace {

// "x1.28": two decimals below x10, where the commit goals (x1.3, x1.5) are read; FormatRatio
// above.
std::string PreciseRatio(double value, double base) {
  if (base <= 0 || value / base >= 10) {
    return FormatRatio(value, base);
  }
  return "x" + FormatFixed(value / base, 2);
}

}  // namespace

std::string LatencyRatio(const Latency& l, const Latency& base, const std::string& base_id) {
  return PreciseRatio(l.p50, base.p50) + " p50, " + PreciseRatio(l.p99, base.p99) + " p99 vs " +
         base_id;
}

CommandWithEvents MakeCommand(const std::string& prefix, size_t n, const std::string& room,
                              int64_t room_seq) {
  CommandWithEvents out;
  out.command.command_id = prefix + "-c" + std::to_string(n);
  out.command.room_id = room;
  out.command.command_type = "SendGift";
  out.command.request_id = "req-" + std::to_string(n);
  out.command.room_seq = room_seq;
  out.command.payload = R"({"user_id":"u-)" + std::to_string(n) + R"(","gift":"rose"})";
  for (size_t k = 0; k < kBenchEventTypes.size(); ++k) {
    Event event;
    event.event_id = out.command.command_id + "-e" + std::to_string(k);
    event.event_type = kBenchEventTypes[k];
    event.room_seq = room_seq;
    event.payload = R"({"user_id":"u-)" + std::to_string(n) + R"("})";
    out.events.push_back(std::move(event));
  }
  return out;
}

HookOptions BenchHookOptions(const MysqlOptions& mysql, const TencentImOptions& im,
                             SyncPublishMode sync_publish) {
  HookOptions options;
  options.mysql = mysql;
  options.tencent_im = im;
  options.node_id = "bench-node";
  options.sync_publish = sync_publish;
  return options;
}

std::unique_ptr<Hook> MakeBenchHook(const HookOptions& options) {
  Error error;
  std::unique_ptr<Hook> hook = CreateHook(options, &error);
  if (!hook) {
    throw BenchFailure("CreateHook: " + error.message);
  }
  return hook;
}

std::unique_ptr<Hook> MakeBenchHook(const MysqlOptions& mysql, const TencentImOptions& im,
                                    SyncPublishMode sync_publish) {
  return MakeBenchHook(BenchHookOptions(mysql, im, sync_publish));
}

}  // namespace room_outbox::bench
