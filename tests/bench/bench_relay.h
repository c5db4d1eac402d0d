// BenchRelay: one real outbox-relay process run by a benchmark against a BenchDatabase and a
// fake IM server. It writes its own directory (relay.toml, the IM secret key, relay.log), starts
// the binary, can wait for the worker's first log line, and reads the process's CPU time from
// /proc. The destructor stops it (SIGTERM, then SIGKILL) through ChildProcess.
//
// The config holds only what aims the relay at the database and the stub; every other key
// takes the relay's shipped default unless BenchRelayOptions says otherwise.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "bench/bench_database.h"
#include "bench/child_process.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {

struct BenchRelayOptions {
  std::string node_id = "bench-relay";
  // [tencent_im] requests_per_second; nullopt: the shipped default (200).
  std::optional<double> requests_per_second;
  // [tencent_im] app_requests_per_second; nullopt: the shipped default (200, shared by the
  // relays through the database); 0: each relay keeps requests_per_second for itself.
  std::optional<double> app_requests_per_second;
  // [tencent_im] pack_max_events; nullopt: the shipped default (1).
  std::optional<size_t> pack_max_events;
  // [outbox_worker] batch_size; nullopt: the shipped default (100).
  std::optional<size_t> batch_size;
  // [outbox_worker] room_min_interval; nullopt: the shipped default.
  std::optional<std::chrono::milliseconds> room_min_interval;
  // [outbox_worker] max_in_flight; nullopt: the shipped default.
  std::optional<size_t> max_in_flight;
};

class BenchRelay {
 public:
  // Writes the files under `dir` (created) and starts `relay_binary`; throws BenchFailure when
  // it cannot be started.
  BenchRelay(const std::string& relay_binary, const std::filesystem::path& dir,
             const BenchDatabase& db, const testing::FakeImServer& stub,
             const BenchRelayOptions& options);

  // Waits for the worker's first log line; throws BenchFailure (quoting the log) when the
  // process exits or 10 s pass first.
  void WaitStarted();

  // utime + stime so far, in seconds.
  double CpuSeconds() const { return process_.CpuSeconds(); }
  bool Running() { return process_.Running(); }
  // SIGTERM and wait up to 10 s; false when it had to be killed.
  bool Stop();
  const std::filesystem::path& log_path() const { return log_; }

 private:
  std::filesystem::path log_;
  ChildProcess process_;
};

// The relay's config text (exposed for the benchmark's notes).
std::string BenchRelayConfig(const BenchDatabase& db, const testing::FakeImServer& stub,
                             const std::filesystem::path& secret_file,
                             const BenchRelayOptions& options);

// The whole text of a file ("" when it cannot be read).
std::string ReadTextFile(const std::filesystem::path& path);

}  // namespace room_outbox::bench
