// Pieces the commit benchmarks (group 3 and 6) share: latency summaries and their text, the
// benchmark's command with three pushed events, and a hook over a benchmark database.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "room_outbox/hook.h"

namespace room_outbox::bench {

// Samples taken before measuring (connections, prepared statements, keep-alive, buffer pool).
inline constexpr size_t kWarmup = 100;

struct Latency {
  double p50 = 0;
  double p99 = 0;
  size_t samples = 0;
};

Latency Summarize(const std::vector<double>& samples_ms);
// "p50 0.412 ms, p99 0.950 ms (2,000 samples)"
std::string LatencyText(const Latency& l);
// "x1.12 p50, x1.30 p99 vs <base_id>"
std::string LatencyRatio(const Latency& l, const Latency& base, const std::string& base_id);

// One command with three pushed events (kBenchEventTypes), in room `room`.
struct CommandWithEvents {
  Command command;
  std::vector<Event> events;
};

CommandWithEvents MakeCommand(const std::string& prefix, size_t n, const std::string& room,
                              int64_t room_seq);

// The benchmarks' HookOptions: `mysql`, `im`, node_id "bench-node", `sync_publish`.
HookOptions BenchHookOptions(const MysqlOptions& mysql, const TencentImOptions& im,
                             SyncPublishMode sync_publish = SyncPublishMode::kInline);

// CreateHook(options); throws BenchFailure when it fails.
std::unique_ptr<Hook> MakeBenchHook(const HookOptions& options);

// CreateHook over `mysql` and `im` with node_id "bench-node"; throws BenchFailure when it fails.
std::unique_ptr<Hook> MakeBenchHook(const MysqlOptions& mysql, const TencentImOptions& im,
                                    SyncPublishMode sync_publish = SyncPublishMode::kInline);

}  // namespace room_outbox::bench
