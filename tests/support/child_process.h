// Lower-level child-process helpers shared by RelayProcess (integration tests) and the
// benchmarks' ChildProcess: fork + exec with a clean start, a polling wait with a deadline, and
// SIGKILL with a reap. They report errors as messages and record nothing with gtest.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace room_outbox::testing {

struct ChildSpec {
  // argv[0] is the program's path.
  std::vector<std::string> argv;
  // The child's whole environment, "NAME=value" entries.
  std::vector<std::string> env;
  // Where its stdout and stderr go (created or truncated, mode 0644); the same path for both
  // sends them to one file.
  std::string stdout_path;
  std::string stderr_path;
};

// This process's environment as "NAME=value" entries.
std::vector<std::string> CurrentEnvironment();

// Starts the child with an empty signal mask, default signal dispositions, stdin from
// /dev/null, no descriptors above 2, and SIGKILL when the thread that started it dies. Returns
// its pid, or -1 with `error` set. Safe in a process with other threads: only async-signal-safe
// calls run between fork and exec.
pid_t SpawnChild(const ChildSpec& spec, std::string& error);

// Waits up to `timeout` (checking every `poll`) for `pid` to end and reaps it. Returns its wait
// status; nullopt while it still runs, or with `error` set when waitpid failed.
std::optional<int> WaitForExit(pid_t pid, std::chrono::milliseconds timeout,
                               std::chrono::milliseconds poll, std::string& error);

// SIGKILL and a blocking reap (a child that already ended is reaped all the same). Returns its
// wait status, or nullopt with `error` set when waitpid failed.
std::optional<int> KillAndReap(pid_t pid, std::string& error);

}  // namespace room_outbox::testing
