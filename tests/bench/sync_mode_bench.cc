// Benchmark 9: HookOptions::sync_publish inline / background / off side by side against a fake
// IM with a 20 ms round trip: the Commit latency, and commit start -> the fake IM receiving the
// event's request. Commands are paced (one per kGap) so the background publisher, which sends
// one request at a time, is not measured behind a queue of its own making.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

constexpr milliseconds kRoundTrip{20};
// Three events of 20 ms each fit with room to spare: the background queue stays empty.
constexpr milliseconds kGap{90};
constexpr size_t kEvents = 3;
constexpr size_t kWarmup = 10;
constexpr size_t kMaxSamples = 200;

struct ModeRun {
  std::vector<double> commit_ms;  // per command
  std::vector<double> to_im_ms;   // per event: commit start -> the fake IM has the request
  size_t published = 0, queued = 0, pending = 0;
};

double P(const std::vector<double>& v, double p) { return Percentile(v, p); }

std::string Text(const std::vector<double>& v) {
  if (v.empty()) return "n/a";
  return "p50 " + FormatFixed(P(v, 50), 2) + " ms, p99 " + FormatFixed(P(v, 99), 2) + " ms (" +
         FormatCount(static_cast<double>(v.size())) + " samples)";
}

std::unique_ptr<Hook> MakeHook(const MysqlOptions& mysql, const testing::FakeImServer& im,
                               SyncPublishMode mode) {
  HookOptions options;
  options.mysql = mysql;
  options.tencent_im = im.ClientOptions();
  options.node_id = "bench-node";
  options.sync_publish = mode;
  Error error;
  auto hook = CreateHook(options, &error);
  if (!hook) throw BenchFailure("CreateHook: " + error.message);
  return hook;
}

// `samples` paced commands of kEvents events, each in a new room.
ModeRun RunMode(const BenchContext& ctx, SyncPublishMode mode, size_t samples) {
  testing::FakeImServerOptions stub_options;
  stub_options.latency = kRoundTrip;
  stub_options.record_bodies = false;
  testing::FakeImServer im(stub_options);
  if (!im.running()) throw BenchFailure("fake IM: " + im.start_error());
  const std::string name = std::string("bench_sync_mode_") + SyncPublishModeName(mode);
  BenchDatabase db(ctx.socket, name);
  ModeRun run;
  std::map<std::string, SteadyClock::time_point> started;  // event_id -> its commit's start
  {
    auto hook = MakeHook(db.Options(), im, mode);
    auto next = SteadyClock::now();
    for (size_t n = 0; n < kWarmup + samples; ++n) {
      std::this_thread::sleep_until(next);
      next += kGap;
      const std::string id = name + "-c" + std::to_string(n);
      Command command{id, "room-" + std::to_string(n), "SendGift", "req", 1, "{}"};
      std::vector<Event> events;
      for (size_t k = 0; k < kEvents; ++k) {
        events.push_back(
            Event{id + "-e" + std::to_string(k), "RoomGiftSent", 1, 0, R"({"user_id":"u-1"})"});
      }
      const auto start = SteadyClock::now();
      CommitResult result = hook->Commit(command, events);
      const double ms =
          std::chrono::duration<double, std::milli>(SteadyClock::now() - start).count();
      if (result.status != CommitStatus::kCommitted) {
        throw BenchFailure(name + ": commit failed: " + result.error.message);
      }
      if (n < kWarmup) continue;
      run.commit_ms.push_back(ms);
      for (const EventDelivery& d : result.events) {
        started[d.event_id] = start;
        run.published += d.state == DeliveryState::kPublished ? 1 : 0;
        run.queued += d.state == DeliveryState::kQueued ? 1 : 0;
        run.pending += d.state == DeliveryState::kPending ? 1 : 0;
      }
    }
    std::this_thread::sleep_for(kGap);  // the last command's background requests
  }
  for (const testing::FakeImRequest& r : im.Requests()) {
    auto it = started.find(r.event_id);
    if (it != started.end()) {
      run.to_im_ms.push_back(
          std::chrono::duration<double, std::milli>(r.arrived - it->second).count());
    }
  }
  return run;
}

std::string Counts(const ModeRun& r) {
  return "; events published inline " + FormatCount(static_cast<double>(r.published)) +
         ", queued " + FormatCount(static_cast<double>(r.queued)) + ", left pending " +
         FormatCount(static_cast<double>(r.pending));
}

}  // namespace

void RunSyncModes(const BenchContext& ctx, Report& report) {
  const size_t samples = std::min(ctx.commit_samples, kMaxSamples);
  const ModeRun inline_run = RunMode(ctx, SyncPublishMode::kInline, samples);
  const ModeRun background = RunMode(ctx, SyncPublishMode::kBackground, samples);
  const ModeRun off = RunMode(ctx, SyncPublishMode::kOff, samples);
  const std::string settings =
      "fake IM answering after 20 ms; 1 command + 3 events per Commit, "
      "a new room each, one Commit per 90 ms; CreateHook defaults "
      "(sync_publish_timeout=500ms), requests_per_second=0";
  auto commit_ratio = [&](const ModeRun& r) {
    return FormatRatio(P(r.commit_ms, 50), P(off.commit_ms, 50)) + " p50, " +
           FormatRatio(P(r.commit_ms, 99), P(off.commit_ms, 99)) + " p99 vs 9c";
  };
  report.Add({"9a", "Hook Commit, sync_publish = inline", settings,
              Text(inline_run.commit_ms) + Counts(inline_run), commit_ratio(inline_run)});
  report.Add({"9b", "Hook Commit, sync_publish = background", settings,
              Text(background.commit_ms) + Counts(background), commit_ratio(background)});
  report.Add(
      {"9c", "Hook Commit, sync_publish = off", settings, Text(off.commit_ms) + Counts(off), "x1"});
  auto to_im_ratio = [&](const ModeRun& r) {
    if (r.to_im_ms.empty()) return std::string();
    return "p50 = round trip + " + FormatFixed(P(r.to_im_ms, 50) - kRoundTrip.count(), 2) + " ms";
  };
  report.Add({"9d", "Commit start -> the fake IM receiving each event's request, inline", settings,
              Text(inline_run.to_im_ms), to_im_ratio(inline_run)});
  report.Add({"9e", "Commit start -> the fake IM receiving each event's request, background",
              settings, Text(background.to_im_ms), to_im_ratio(background)});
  report.AddNote(
      "9: the 3 events of a command are sent one after the other (per-room order), so "
      "their commit -> IM times are about c, c + 20 ms and c + 40 ms; the p50 is the "
      "second event's. With sync_publish = off the relay delivers (benchmark 6).");
}

}  // namespace room_outbox::bench
