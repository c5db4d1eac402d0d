#include "bench/child_process.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "bench/bench_support.h"
#include "support/child_process.h"

namespace room_outbox::bench {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  testing::ChildSpec spec;
  spec.argv = argv;
  spec.env = testing::CurrentEnvironment();
  spec.stdout_path = log_path;
  spec.stderr_path = log_path;
  std::string error;
  pid_ = testing::SpawnChild(spec, error);
  if (pid_ < 0) {
    throw BenchFailure("cannot start " + (argv.empty() ? std::string("(no program)") : argv[0]) +
                       ": " + error);
  }
}

ChildProcess::~ChildProcess() { (void)Stop(std::chrono::milliseconds(5000)); }

bool ChildProcess::Running() {
  if (pid_ <= 0 || exit_status_) {
    return false;
  }
  std::string error;
  exit_status_ = testing::WaitForExit(pid_, std::chrono::milliseconds(0),
                                      std::chrono::milliseconds(0), error);
  return !exit_status_ && error.empty();
}

std::optional<int> ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (!Running()) {
    return exit_status_;
  }
  (void)kill(pid_, SIGTERM);
  std::string error;
  exit_status_ = testing::WaitForExit(pid_, grace, std::chrono::milliseconds(10), error);
  if (exit_status_ || !error.empty()) {
    return exit_status_;
  }
  exit_status_ = testing::KillAndReap(pid_, error);
  return std::nullopt;
}

double ChildProcess::CpuSeconds() const { return ProcessCpuSeconds(pid_); }

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: parse after the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) {
    throw BenchFailure("cannot read /proc/" + std::to_string(pid) + "/stat");
  }
  std::istringstream fields(text.substr(close + 2));
  std::string field;
  unsigned long long utime = 0;
  unsigned long long stime = 0;
  // After the name: state(3) ... utime is field 14 and stime field 15.
  for (int n = 3; n <= 15 && fields >> field; ++n) {
    if (n == 14) utime = std::stoull(field);
    if (n == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

long ChildProcess::StatusKib(const std::string& key) const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::stol(line.substr(key.size() + 1));
    }
  }
  return 0;
}

}  // namespace room_outbox::bench
