#include "bench/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "bench/bench_support.h"

extern char** environ;

namespace room_outbox::bench {
namespace {

// posix_spawn file actions, destroyed on every path.
class FileActions {
 public:
  FileActions() { posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_;
};

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) {
  if (argv.empty()) {
    throw BenchFailure("ChildProcess: empty argv");
  }
  FileActions actions;
  if (posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, log_path.c_str(),
                                       O_WRONLY | O_CREAT | O_TRUNC, 0644) != 0 ||
      posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO) != 0) {
    throw BenchFailure("posix_spawn_file_actions for " + log_path + " failed");
  }
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  const int rc = posix_spawn(&pid_, argv[0].c_str(), actions.get(), nullptr, args.data(), environ);
  if (rc != 0) {
    pid_ = -1;
    throw BenchFailure("cannot start " + argv[0] + ": " + std::strerror(rc));
  }
}

ChildProcess::~ChildProcess() { (void)Stop(std::chrono::milliseconds(5000)); }

bool ChildProcess::Running() {
  if (pid_ <= 0 || exit_status_) {
    return false;
  }
  int status = 0;
  const pid_t done = waitpid(pid_, &status, WNOHANG);
  if (done == pid_) {
    exit_status_ = status;
    return false;
  }
  return done == 0;
}

std::optional<int> ChildProcess::Stop(std::chrono::milliseconds grace) {
  if (!Running()) {
    return exit_status_;
  }
  (void)kill(pid_, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!Running()) {
      return exit_status_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  (void)kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_status_ = status;
  return std::nullopt;
}

double ChildProcess::CpuSeconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // The command name (field 2) is in parentheses and may hold spaces: parse after the last ')'.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) {
    throw BenchFailure("cannot read /proc/" + std::to_string(pid_) + "/stat");
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
