// Benchmark 16: packed messages against the app's call limit. A backlog of busy rooms (the
// events committed before the relay starts) is drained by one real outbox-relay process (shipped
// defaults: requests_per_second 200, the app's 200 calls/s shared through the database,
// max_in_flight 16, room_min_interval shipped) against an IM stand-in with a 20 ms round trip that
// answers 60007 beyond 200 calls/s for the app and caps each group at 40 messages/s, once with
// [tencent_im] pack_max_events 1 and once with 20, on the same backlog.
//
// Reported: events/s (rows published over the wall time from the relay's start to the last row
// published), calls/s (send_group_msg requests the stand-in received over that time), events per
// delivered message, and the relay process's CPU (utime + stime from /proc) per event. Nothing
// here asserts on speed.
#include <filesystem>
#include <string>
#include <thread>

#include "bench/bench_database.h"
#include "bench/bench_relay.h"
#include "bench/benchmarks.h"
#include "bench/worker_harness.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;

constexpr milliseconds kLatency{20};
constexpr milliseconds kDrainLimit{400000};
constexpr milliseconds kPendingPoll{20};
constexpr int kAppLimit = 200;
constexpr int kGroupCap = 40;
constexpr size_t kPack = 20;

struct PackRun {
  size_t pack = 1;
  size_t rows = 0;
  size_t published = 0;
  double seconds = 0;
  double cpu_seconds = 0;
  testing::FakeImStats im;
  bool relay_ok = true;  // ran to the end and stopped on SIGTERM
  double EventsPerSecond() const {
    return seconds > 0 ? static_cast<double>(published) / seconds : 0;
  }
  double CallsPerSecond() const {
    return seconds > 0 ? static_cast<double>(im.requests) / seconds : 0;
  }
};

std::unique_ptr<testing::FakeImServer> StartLimitedStub() {
  testing::FakeImServerOptions options;
  options.app_limit_per_second = kAppLimit;
  options.group_cap_per_second = kGroupCap;
  options.latency = kLatency;
  options.record_requests = false;
  options.record_bodies = false;
  auto stub = std::make_unique<testing::FakeImServer>(options);
  if (!stub->running()) throw BenchFailure("IM stand-in: " + stub->start_error());
  return stub;
}

// The batch that fills one wave with whole packs: max_in_flight (16) messages of kPack events,
// what docs/operations.md ("Hot rooms") says to set with pack_max_events 20.
constexpr size_t kPackBatch = 16 * kPack;

PackRun DrainWithPack(const BenchContext& ctx, size_t pack, std::optional<size_t> batch = {}) {
  const std::string name =
      "bench_pack_" + std::to_string(pack) + (batch ? "_b" + std::to_string(*batch) : "");
  auto stub = StartLimitedStub();
  BenchDatabase db(ctx.socket, name);
  OutboxFill fill;
  fill.rows = ctx.pack_rooms * ctx.pack_room_events;
  fill.rooms = ctx.pack_rooms;
  fill.id_prefix = name;
  fill.created_at_ms = NowMs();
  InsertPendingRows(db, fill);
  BenchRelayOptions options;
  options.node_id = "bench-pack-" + std::to_string(pack);
  options.pack_max_events = pack;
  options.batch_size = batch;
  PackRun run;
  run.pack = pack;
  run.rows = fill.rows;
  Stopwatch watch;
  BenchRelay relay(ctx.relay_binary, std::filesystem::path(ctx.work_dir) / name, db, *stub,
                   options);
  relay.WaitStarted();
  while (db.PendingCount() > 0 && relay.Running() &&
         watch.Millis() < static_cast<double>(kDrainLimit.count())) {
    std::this_thread::sleep_for(kPendingPoll);
  }
  run.seconds = watch.Seconds();
  run.cpu_seconds = relay.CpuSeconds();
  run.relay_ok = relay.Running() && relay.Stop();
  run.published =
      static_cast<size_t>(db.Scalar("SELECT COUNT(*) FROM room_outbox WHERE status = 'published'"));
  run.im = stub->Stats();
  return run;
}

std::string RateText(const PackRun& run) {
  const double per_message =
      run.im.delivered_messages > 0
          ? static_cast<double>(run.im.delivered) / static_cast<double>(run.im.delivered_messages)
          : 0;
  std::string text =
      FormatCount(run.EventsPerSecond()) + " events/s, " + FormatCount(run.CallsPerSecond()) +
      " calls/s (" + FormatCount(static_cast<double>(run.published)) + " of " +
      FormatCount(static_cast<double>(run.rows)) + " rows published in " +
      FormatFixed(run.seconds, 1) + " s; " + FormatCount(static_cast<double>(run.im.requests)) +
      " calls, " + FormatFixed(per_message, 1) + " events per delivered message, 60007 " +
      FormatCount(static_cast<double>(run.im.app_limited)) + ", MsgFreqCtrl " +
      FormatCount(static_cast<double>(run.im.freq_dropped)) + ", delivered twice " +
      FormatCount(static_cast<double>(run.im.duplicates)) + ")";
  return run.relay_ok ? text : text + "; THE RELAY EXITED EARLY OR DID NOT STOP";
}

double CpuMicrosPerEvent(const PackRun& run) {
  return run.published > 0 ? run.cpu_seconds * 1e6 / static_cast<double>(run.published) : 0;
}

}  // namespace

void RunPackedDrain(const BenchContext& ctx, Report& report) {
  const PackRun one = DrainWithPack(ctx, 1);
  const PackRun packed = DrainWithPack(ctx, kPack);
  const PackRun batched = DrainWithPack(ctx, kPack, kPackBatch);
  const std::string how =
      FormatCount(static_cast<double>(one.rows)) + " events over " +
      std::to_string(ctx.pack_rooms) +
      " busy rooms, pending before the relay starts; one outbox-relay, shipped defaults "
      "(requests_per_second 200, app_requests_per_second 200, max_in_flight 16, "
      "room_min_interval " +
      ShippedRoomMinInterval() + "); IM stand-in: 20 ms round trip, the app limited to " +
      std::to_string(kAppLimit) + " calls/s (60007 beyond), each group to " +
      std::to_string(kGroupCap) + " messages/s";
  report.Add({"16a", "Events/s out of an app limited to 200 calls/s, 50 busy rooms, pack 1",
              how + ", pack_max_events 1", RateText(one), "at most 200 events/s"});
  report.Add({"16b", "Events/s out of an app limited to 200 calls/s, 50 busy rooms, pack 20",
              how + ", pack_max_events 20", RateText(packed),
              FormatRatio(packed.EventsPerSecond(), one.EventsPerSecond()) + " vs pack 1"});
  report.Add({"16d",
              "Events/s out of an app limited to 200 calls/s, 50 busy rooms, pack 20, a batch of "
              "whole packs",
              how + ", pack_max_events 20, batch_size " + std::to_string(kPackBatch),
              RateText(batched),
              FormatRatio(batched.EventsPerSecond(), one.EventsPerSecond()) +
                  " vs pack 1; goal >= 2,000 events/s"});
  report.Add({"16c", "Relay CPU per event, pack 20 vs pack 1, the same drain",
              how + "; utime + stime of the relay process (/proc) over the events published",
              "pack 20: " + FormatFixed(CpuMicrosPerEvent(packed), 1) +
                  " us/event; pack 1: " + FormatFixed(CpuMicrosPerEvent(one), 1) + " us/event",
              FormatRatio(CpuMicrosPerEvent(packed), CpuMicrosPerEvent(one)) + " of pack 1"});
}

}  // namespace room_outbox::bench
