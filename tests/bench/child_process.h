// ChildProcess: a program started by the benchmark (SpawnChild of support/child_process.h), its
// stdout and stderr sent to one log file, and what /proc says about its CPU time and memory. The
// destructor stops it (SIGTERM, then SIGKILL after a grace period) and reaps it, so no child
// outlives the benchmark.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace room_outbox::bench {

// utime + stime of process `pid` so far, in seconds (/proc/PID/stat); throws BenchFailure when it
// cannot be read.
double ProcessCpuSeconds(pid_t pid);

class ChildProcess {
 public:
  // Starts `argv[0]` with `argv`; throws BenchFailure when it cannot be started.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // False once it has exited (the exit status is then kept).
  bool Running();
  // SIGTERM, wait up to `grace`, then SIGKILL; returns the exit status (as from waitpid) or
  // nullopt when it had to be killed.
  std::optional<int> Stop(std::chrono::milliseconds grace);

  // utime + stime of the process so far, in seconds (/proc/PID/stat).
  double CpuSeconds() const;
  // A "Vm*" line of /proc/PID/status in KiB (e.g. "VmHWM", "VmRSS"); 0 when absent.
  long StatusKib(const std::string& key) const;

 private:
  pid_t pid_ = -1;
  std::optional<int> exit_status_;
};

}  // namespace room_outbox::bench
