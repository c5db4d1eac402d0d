// Benchmark 15: a gift storm. One room service (a Hook on this thread, the relay's [wake] socket)
// commits 100 gift commands a second (one RoomGiftSent each) into one room and one a second into
// each of 20 other rooms, for kStorm; one relay (the worker as outbox-relay runs it: wake socket,
// poll_interval 200ms, batch_size 50, the other shipped defaults, room_min_interval among them).
// Hook and relay send to one IM stand-in that caps every group at 40 messages a second as Tencent
// does (what is over is answered OK with MsgDropReason "MsgFreqCtrl" and not delivered).
//
// Each is run with [tencent_im] pack_max_events 1 and 20: the hook and the relay share the one
// TencentImOptions (what one config file gives both), so both pack at 20.
//
// Measured per event: from the call to Commit to the first request the stand-in delivered (OK,
// not dropped, not a duplicate) that carried it, alone or in a pack, on this process's steady
// clock; "last out" is the last delivery after the last Commit returned. Events published in the
// database but never delivered are counted as lost. The hot group's messages per second are the
// messages it was delivered (a pack counts once) over the time from its first to its last, and
// the most in any one second. Nothing here asserts on speed.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench/bench_database.h"
#include "bench/benchmarks.h"
#include "bench/commit_support.h"
#include "bench/worker_harness.h"
#include "room_outbox/hook.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

constexpr int kHotPerSecond = 100;
constexpr size_t kQuietRooms = 20;
constexpr std::chrono::seconds kStorm{15};
constexpr int kGroupCap = 40;
constexpr std::chrono::seconds kDrainLimit{240};
constexpr size_t kStormPack = 20;  // pack_max_events of the packed runs
const std::string kHotRoom = "room-hot";

// One command of the storm: when it is due (from the start) and its room.
struct Planned {
  milliseconds at{0};
  std::string room;
};

// Every command of the storm in time order: the hot room every 10 ms, quiet room k once a second
// at k * 47 ms into the second.
std::vector<Planned> StormPlan() {
  std::vector<Planned> plan;
  const int hot = kHotPerSecond * static_cast<int>(kStorm.count());
  for (int i = 0; i < hot; ++i) plan.push_back({milliseconds(i * 1000 / kHotPerSecond), kHotRoom});
  for (int s = 0; s < kStorm.count(); ++s) {
    for (size_t k = 0; k < kQuietRooms; ++k) {
      plan.push_back(
          {milliseconds(s * 1000 + static_cast<int>(k) * 47), "room-quiet-" + std::to_string(k)});
    }
  }
  std::stable_sort(plan.begin(), plan.end(),
                   [](const Planned& a, const Planned& b) { return a.at < b.at; });
  return plan;
}

struct Committed {
  std::unordered_map<std::string, Steady::time_point> at;  // event_id -> Commit called
  std::unordered_map<std::string, bool> hot;               // event_id -> in the hot room
  Steady::time_point last_returned;
  size_t late = 0;  // commands that started over 100 ms behind their plan
};

Committed CommitStorm(Hook& hook, const std::string& name) {
  std::map<std::string, int64_t> room_seq;
  Committed out;
  const Steady::time_point start = Steady::now();
  size_t n = 0;
  for (const Planned& p : StormPlan()) {
    std::this_thread::sleep_until(start + p.at);
    const Steady::time_point called = Steady::now();
    if (called - (start + p.at) > milliseconds(100)) ++out.late;
    Command command{name + "-c" + std::to_string(n),
                    p.room,
                    "SendGift",
                    "req-" + std::to_string(n),
                    ++room_seq[p.room],
                    R"({"user_id":"u-)" + std::to_string(n) + R"(","gift":"rose"})"};
    Event event{command.command_id + "-e", "RoomGiftSent", command.room_seq, 0, command.payload};
    CommitResult result = hook.Commit(command, {event});
    if (result.status != CommitStatus::kCommitted) {
      throw BenchFailure("storm: commit failed: " + result.error.message);
    }
    out.at[event.event_id] = called;
    out.hot[event.event_id] = p.room == kHotRoom;
    out.last_returned = Steady::now();
    ++n;
  }
  return out;
}

struct StormRun {
  std::vector<double> hot_ms;
  std::vector<double> quiet_ms;
  double last_out_s = 0;
  size_t lost = 0;
  size_t duplicates = 0;
  size_t dropped = 0;             // requests the group cap answered MsgFreqCtrl
  size_t hot_messages = 0;        // messages delivered to the hot group
  double hot_messages_per_s = 0;  // hot_messages over its first to last delivery
  size_t hot_peak_per_s = 0;      // the most hot-group deliveries in any 1 s
  size_t late_commits = 0;
  bool drained = false;
};

// The messages per second delivered to the hot group: mean and most in any second.
void MeasureHotGroup(const std::vector<Steady::time_point>& arrived, StormRun& run) {
  run.hot_messages = arrived.size();
  if (arrived.size() > 1) {
    const double span = std::chrono::duration<double>(arrived.back() - arrived.front()).count();
    run.hot_messages_per_s = span > 0 ? static_cast<double>(arrived.size()) / span : 0;
  }
  size_t first = 0;
  for (size_t last = 0; last < arrived.size(); ++last) {
    while (arrived[last] - arrived[first] >= std::chrono::seconds(1)) ++first;
    run.hot_peak_per_s = std::max(run.hot_peak_per_s, last - first + 1);
  }
}

void Measure(const Committed& committed, const testing::FakeImServer& im, StormRun& run) {
  std::unordered_map<std::string, Steady::time_point> delivered;
  std::vector<Steady::time_point> hot_arrivals;
  for (const testing::FakeImRequest& r : im.Requests()) {
    if (r.answer != testing::FakeImFault::Kind::kOk || r.deduped) continue;
    if (r.room_id == kHotRoom) hot_arrivals.push_back(r.arrived);
    for (const testing::FakeImEvent& event : r.events) {
      auto [it, first] = delivered.emplace(event.event_id, r.arrived);
      if (!first) ++run.duplicates;
    }
  }
  std::sort(hot_arrivals.begin(), hot_arrivals.end());
  MeasureHotGroup(hot_arrivals, run);
  Steady::time_point last = committed.last_returned;
  for (const auto& [event_id, called] : committed.at) {
    auto it = delivered.find(event_id);
    if (it == delivered.end()) {
      ++run.lost;
      continue;
    }
    last = std::max(last, it->second);
    const double ms = std::chrono::duration<double, std::milli>(it->second - called).count();
    (committed.hot.at(event_id) ? run.hot_ms : run.quiet_ms).push_back(ms);
  }
  run.last_out_s = std::chrono::duration<double>(last - committed.last_returned).count();
  run.dropped = im.Stats().freq_dropped;
}

StormRun RunStorm(const BenchContext& ctx, SyncPublishMode sync, size_t pack,
                  const std::string& id) {
  const std::string name = "bench_storm_" + id + "_pack" + std::to_string(pack);
  testing::FakeImServerOptions im_options;
  im_options.record_bodies = false;
  im_options.group_cap_per_second = kGroupCap;
  testing::FakeImServer im(im_options);
  if (!im.running()) throw BenchFailure("IM stand-in: " + im.start_error());
  BenchDatabase db(ctx.socket, name);
  relay::WorkerOptions options = DefaultWorkerOptions();
  options.poll_interval = milliseconds(200);
  options.batch_size = 50;
  TencentImOptions im_client = im.ClientOptions();
  im_client.pack_max_events = pack;
  options.pack_max_events = pack;  // as relay_app.cc takes it from [tencent_im]
  options.max_body_bytes = im_client.max_body_bytes;
  options.group_id_prefix = im_client.group_id_prefix;
  WorkerHarness relay(db.Options(), im_client, options);
  std::filesystem::create_directories(ctx.work_dir);
  const std::string wake = ctx.work_dir + "/" + name + ".wake.sock";
  std::atomic<uint64_t> wakeups{0};
  auto listener = ListenForWakes("storm", wake, relay, wakeups);
  HookOptions hook_options = BenchHookOptions(db.Options(), im_client, sync);
  hook_options.wake_socket = wake;
  std::unique_ptr<Hook> hook = MakeBenchHook(hook_options);
  relay.Start();
  const Committed committed = CommitStorm(*hook, name);
  Stopwatch drain;
  while (db.PendingCount() > 0 && drain.Seconds() < kDrainLimit.count()) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  StormRun run;
  run.drained = db.PendingCount() == 0;
  relay.Stop();
  run.late_commits = committed.late;
  Measure(committed, im, run);
  return run;
}

std::string P50P99(const std::vector<double>& ms) {
  if (ms.empty()) return "none";
  const Latency l = Summarize(ms);
  return "p50 " + FormatCount(l.p50) + " ms, p99 " + FormatCount(l.p99) + " ms";
}

std::string Counts(const StormRun& run) {
  return "last event out " + FormatFixed(run.last_out_s, 1) + " s after the storm; lost " +
         FormatCount(static_cast<double>(run.lost)) + ", delivered twice " +
         FormatCount(static_cast<double>(run.duplicates)) + ", dropped by the group cap " +
         FormatCount(static_cast<double>(run.dropped)) +
         (run.drained ? "" : "; NOT DRAINED within the limit") +
         (run.late_commits > 0
              ? "; " + FormatCount(static_cast<double>(run.late_commits)) + " commits started late"
              : "") +
         "; hot group " + FormatCount(run.hot_messages_per_s) +
         " messages/s (most in 1 s: " + FormatCount(static_cast<double>(run.hot_peak_per_s)) +
         ", " + FormatCount(static_cast<double>(run.hot_messages)) + " messages)";
}

std::string How(size_t pack) {
  return "100 commands/s into one room + 1/s into each of 20 rooms for 15 s; IM caps each group "
         "at 40 messages/s; [wake] socket, poll_interval 200ms, batch_size 50, "
         "room_min_interval " +
         ShippedRoomMinInterval() + ", pack_max_events " + std::to_string(pack) +
         (pack > 1 ? " (hook and relay)" : "");
}

}  // namespace

void RunGiftStorm(const BenchContext& ctx, Report& report) {
  const std::string how = How(1);
  const StormRun in = RunStorm(ctx, SyncPublishMode::kInline, 1, "inline");
  const StormRun off = RunStorm(ctx, SyncPublishMode::kOff, 1, "off");
  report.Add({"15a", "Gift storm, sync publish inline: the hot room, commit -> delivered", how,
              P50P99(in.hot_ms), "goal with pack 20: p99 <= 1 s"});
  report.Add({"15b", "Gift storm, sync publish inline: the 20 quiet rooms beside it", how,
              P50P99(in.quiet_ms), "goal: p99 <= 300 ms"});
  report.Add({"15c", "Gift storm, sync publish inline: after the storm", how, Counts(in),
              "goal with pack 20: last out <= 2 s"});
  report.Add({"15d", "Gift storm, sync publish off: hot room / quiet rooms", how,
              "hot " + P50P99(off.hot_ms) + "; quiet " + P50P99(off.quiet_ms),
              "goal: quiet p99 <= 300 ms"});
  report.Add({"15e", "Gift storm, sync publish off: after the storm", how, Counts(off), ""});

  const std::string packed = How(kStormPack);
  const StormRun in20 = RunStorm(ctx, SyncPublishMode::kInline, kStormPack, "inline");
  const StormRun off20 = RunStorm(ctx, SyncPublishMode::kOff, kStormPack, "off");
  report.Add({"15f", "Gift storm, pack 20, sync publish inline: the hot room, commit -> delivered",
              packed, P50P99(in20.hot_ms), "goal: p99 <= 1 s"});
  report.Add({"15g", "Gift storm, pack 20, sync publish inline: the 20 quiet rooms beside it",
              packed, P50P99(in20.quiet_ms), "goal: p99 <= 300 ms"});
  report.Add({"15h", "Gift storm, pack 20, sync publish inline: after the storm", packed,
              Counts(in20), "goal: last out <= 2 s, lost 0"});
  report.Add({"15i", "Gift storm, pack 20, sync publish off: hot room / quiet rooms", packed,
              "hot " + P50P99(off20.hot_ms) + "; quiet " + P50P99(off20.quiet_ms),
              "goal: hot p99 <= 1 s, quiet p99 <= 300 ms"});
  report.Add({"15j", "Gift storm, pack 20, sync publish off: after the storm", packed,
              Counts(off20), "goal: last out <= 2 s, lost 0"});
}

}  // namespace room_outbox::bench
