// room-sim: a sample room-service built on the hook. It applies a deterministic mix of room
// commands to an in-memory room cell and commits each through Hook::Commit (command log, outbox
// rows and the room snapshot in one transaction), then prints a one-line JSON summary.
//
//   room-sim --config PATH --rooms N --commands M [--threads T] [--seed S] [--run-id ID]
//
// With --threads T (default 1) it runs T threads as a room service runs its Room Cells: each
// thread has its own Hook (the same options) and owns the rooms r with r % T == its index, so a
// room's commands are applied and committed in order by one thread; the M commands are split
// across the threads by how many rooms each owns (thread t's seed is S + t and, when T > 1, its
// run id is "<ID>-t<t>"). The summary sums every thread's counters and adds "threads" and
// "commands_per_second" (committed commands over the wall-clock time of the threads' run).
//
// It needs the table of sim/room_snapshot.sql beside the outbox schema (one CREATE TABLE IF NOT
// EXISTS, valid on MariaDB and MySQL: apply it where room-sim runs). A commit failing for a
// non-retryable reason (e.g. a missing table) ends the run. A commit whose outcome is unknown
// (kUnknown) is counted in "unknown" and retried once with the same command_id, which tells
// whether it had committed (kDuplicate) or not (then it commits now). Exit codes: 0 when every
// command committed (whatever IM did); 1 when a command could not be committed or the hook could
// not start; 2 for bad usage or an invalid config.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "room_cell.h"
#include "room_outbox/hook.h"
#include "room_snapshot_sql.h"

namespace {

using room_outbox::CommitStatus;
using room_outbox::DeliveryState;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

const char* LevelName(room_outbox::LogLevel level) {
  switch (level) {
    case room_outbox::LogLevel::kDebug:
      return "debug";
    case room_outbox::LogLevel::kInfo:
      return "info";
    case room_outbox::LogLevel::kWarn:
      return "warn";
    case room_outbox::LogLevel::kError:
      return "error";
  }
  return "info";
}

// The JSON summary's counters.
struct Tally {
  int64_t committed = 0, duplicates = 0, failed = 0, unknown = 0, events = 0, im_events = 0,
          sync_published = 0, left_pending = 0, queued = 0;

  nlohmann::ordered_json Json() const {
    nlohmann::ordered_json summary;
    summary["commands"] = committed;
    summary["duplicates"] = duplicates;
    summary["failed"] = failed;
    summary["unknown"] = unknown;
    summary["events"] = events;
    summary["im_events"] = im_events;
    summary["sync_published"] = sync_published;
    summary["left_pending"] = left_pending;
    summary["queued"] = queued;  // handed to the background publisher (sync_publish=background)
    return summary;
  }

  void Add(const Tally& other) {
    committed += other.committed;
    duplicates += other.duplicates;
    failed += other.failed;
    unknown += other.unknown;
    events += other.events;
    im_events += other.im_events;
    sync_published += other.sync_published;
    left_pending += other.left_pending;
    queued += other.queued;
  }
};

bool ForIm(const std::vector<std::string>& skip, const std::string& type) {
  return std::find(skip.begin(), skip.end(), type) == skip.end();
}

// Counts a committed command's events by what the sync publish did with them.
void CountCommitted(const room_outbox::sim::Applied& applied,
                    const room_outbox::CommitResult& result, const std::vector<std::string>& skip,
                    Tally& tally) {
  ++tally.committed;
  for (size_t k = 0; k < result.events.size(); ++k) {
    ++tally.events;
    tally.im_events += ForIm(skip, applied.events[k].event_type) ? 1 : 0;
    if (result.events[k].state == DeliveryState::kPublished) {
      ++tally.sync_published;
    } else if (result.events[k].state == DeliveryState::kPending) {
      ++tally.left_pending;
    } else if (result.events[k].state == DeliveryState::kQueued) {
      ++tally.queued;
    }
  }
}

// A command that had committed although its first result said kUnknown: its events are the
// relay's now (the hook published none of them).
void CountResolvedUnknown(const room_outbox::sim::Applied& applied,
                          const std::vector<std::string>& skip, Tally& tally) {
  ++tally.committed;
  for (const auto& event : applied.events) {
    ++tally.events;
    const bool for_im = ForIm(skip, event.event_type);
    tally.im_events += for_im ? 1 : 0;
    tally.left_pending += for_im ? 1 : 0;
  }
}

room_outbox::CommitResult CommitApplied(room_outbox::Hook& hook,
                                        const room_outbox::sim::Applied& applied) {
  return hook.Commit(applied.command, applied.events, [&applied](room_outbox::Transaction& tx) {
    const int64_t now = NowMs();
    return tx.Execute(room_outbox::sim::kUpsertRoomSnapshot,
                      {applied.command.room_id, applied.command.room_seq, applied.snapshot, now,
                       applied.command.room_seq, applied.snapshot, now});
  });
}

// Commits one applied command and counts it. False when the run should stop (a failure that
// every further command would hit too).
bool RunCommand(room_outbox::Hook& hook, room_outbox::sim::RoomCell& cell,
                const room_outbox::sim::Applied& applied, const std::vector<std::string>& skip,
                Tally& tally) {
  auto result = CommitApplied(hook, applied);
  if (result.status == CommitStatus::kUnknown) {
    ++tally.unknown;
    std::cerr << "room-sim: command " << applied.command.command_id
              << " outcome unknown, asking again: " << result.error.message << "\n";
    result = CommitApplied(hook, applied);  // the same command_id tells which
    if (result.status == CommitStatus::kDuplicate) {
      cell.Accept(applied);  // it had committed
      CountResolvedUnknown(applied, skip, tally);
      return true;
    }
  }
  switch (result.status) {
    case CommitStatus::kFailed:
    case CommitStatus::kUnknown:
      ++tally.failed;
      std::cerr << "room-sim: command " << applied.command.command_id
                << " failed: " << result.error.message << "\n";
      return room_outbox::IsRetryable(result.error);
    case CommitStatus::kDuplicate:
      ++tally.duplicates;
      return true;
    case CommitStatus::kCommitted:
      break;
  }
  // Persisted: now the in-memory room state may change (persist first, then apply).
  cell.Accept(applied);
  CountCommitted(applied, result, skip, tally);
  return true;
}

// The command line.
struct SimArgs {
  std::string config_path;
  int rooms = 10;
  int commands = 100;
  int threads = 1;
  uint64_t seed = 1;
  std::string run_id;
};

// Parses the command line into `args`; nullopt to go on, else the exit code (--help: 0, a usage
// error: 2, the documented code rather than CLI11's own).
std::optional<int> ParseArgs(int argc, char** argv, SimArgs& args) {
  CLI::App app{"room-sim: a sample room-service that commits room commands through the hook"};
  app.add_option("--config", args.config_path, "relay/hook TOML config")->required();
  app.add_option("--rooms", args.rooms, "number of rooms")->check(CLI::Range(1, 1000000));
  app.add_option("--commands", args.commands, "number of commands")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--threads", args.threads,
                 "threads, each with its own Hook and its own rooms (at most --rooms)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--seed", args.seed, "seed of the command mix");
  app.add_option("--run-id", args.run_id,
                 "prefix of command ids (default: derived from the clock)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (args.threads > args.rooms) {
    std::cerr << "room-sim: --threads " << args.threads << " is more than --rooms " << args.rooms
              << ": every thread owns at least one room\n";
    return 2;
  }
  return std::nullopt;
}

// The HookOptions a room service reads from the shared config file, as any host would: the
// public LoadHookOptions, its warnings on stderr. nullopt (the reason on stderr) for an invalid
// config.
std::optional<room_outbox::HookOptions> LoadOptions(const std::string& config_path) {
  room_outbox::Error error;
  std::vector<std::string> warnings;
  auto options = room_outbox::LoadHookOptions(config_path, &error, &warnings);
  if (!options) {
    std::cerr << "room-sim: invalid config: " << error.message << "\n";
    return std::nullopt;
  }
  for (const std::string& warning : warnings) {
    std::cerr << ("room-sim warn: configuration warning: " + warning + "\n");
  }
  options->log = [](room_outbox::LogLevel level, std::string_view line) {
    if (level != room_outbox::LogLevel::kDebug) {
      // One write per line: several threads' Hooks log at once.
      std::cerr << ("room-sim " + std::string(LevelName(level)) + ": " + std::string(line) + "\n");
    }
  };
  return options;
}

// One thread of the run: its own Hook and room cell, its share of the commands.
struct SimThread {
  std::unique_ptr<room_outbox::Hook> hook;
  std::unique_ptr<room_outbox::sim::RoomCell> cell;
  int commands = 0;
  Tally tally;
};

// Thread t's share of `args.commands`, in proportion to the rooms it owns (the shares sum to
// the total).
int CommandsOf(const SimArgs& args, int t) {
  int64_t rooms_before = 0;
  for (int k = 0; k < t; ++k) {
    rooms_before += room_outbox::sim::RoomCell::OwnedRooms(args.rooms, k, args.threads);
  }
  const int64_t rooms_through =
      rooms_before + room_outbox::sim::RoomCell::OwnedRooms(args.rooms, t, args.threads);
  const int64_t total = args.commands;
  return static_cast<int>(total * rooms_through / args.rooms - total * rooms_before / args.rooms);
}

// Every thread's Hook (the same options) and cell; empty (the reason on stderr) when a Hook
// could not start.
std::vector<SimThread> MakeThreads(const SimArgs& args, const room_outbox::HookOptions& options) {
  std::vector<SimThread> threads(static_cast<size_t>(args.threads));
  for (int t = 0; t < args.threads; ++t) {
    SimThread& thread = threads[static_cast<size_t>(t)];
    room_outbox::Error error;
    thread.hook = room_outbox::CreateHook(options, &error);
    if (!thread.hook) {
      std::cerr << "room-sim: cannot start the hook: " << error.message << "\n";
      return {};
    }
    const std::string run_id =
        args.threads == 1 ? args.run_id : args.run_id + "-t" + std::to_string(t);
    thread.cell = std::make_unique<room_outbox::sim::RoomCell>(
        args.rooms, args.seed + static_cast<uint64_t>(t), run_id, t, args.threads);
    thread.commands = CommandsOf(args, t);
  }
  return threads;
}

// One thread's loop: its commands in order, until they are done or a failure (its own or
// another thread's) ends the run.
void RunThread(SimThread& thread, const std::vector<std::string>& skip, std::atomic<bool>& stop) {
  for (int i = 0; i < thread.commands && !stop.load(std::memory_order_relaxed); ++i) {
    if (!RunCommand(*thread.hook, *thread.cell, thread.cell->Next(NowMs()), skip, thread.tally)) {
      stop.store(true, std::memory_order_relaxed);
    }
  }
}

// Runs every thread to its end and returns the summed counters, with "threads" and
// "commands_per_second".
nlohmann::ordered_json RunThreads(std::vector<SimThread>& threads,
                                  const std::vector<std::string>& skip, Tally& total) {
  std::atomic<bool> stop{false};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> running;
  for (SimThread& thread : threads) {
    running.emplace_back([&thread, &skip, &stop] { RunThread(thread, skip, stop); });
  }
  for (std::thread& t : running) {
    t.join();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const SimThread& thread : threads) {
    total.Add(thread.tally);
  }
  nlohmann::ordered_json summary = total.Json();
  summary["threads"] = threads.size();
  summary["commands_per_second"] =
      seconds > 0 ? std::round(static_cast<double>(total.committed) / seconds * 10) / 10 : 0.0;
  return summary;
}

}  // namespace

int main(int argc, char** argv) {
  SimArgs args;
  if (auto exit_code = ParseArgs(argc, argv, args)) {
    return *exit_code;
  }
  room_outbox::LibraryInit libraries;
  if (!libraries.status().ok()) {
    std::cerr << "room-sim: " << libraries.status().error().message << "\n";
    return 1;
  }
  auto options = LoadOptions(args.config_path);
  if (!options) {
    return 2;
  }
  if (args.run_id.empty()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "sim%llx", static_cast<unsigned long long>(NowMs()));
    args.run_id = buf;
  }
  std::vector<SimThread> threads = MakeThreads(args, *options);
  if (threads.empty()) {
    return 1;
  }
  Tally tally;
  std::cout << RunThreads(threads, options->tencent_im.skip_event_types, tally).dump() << std::endl;
  return tally.failed == 0 ? 0 : 1;
}
