#include "support/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char** environ;

namespace room_outbox::testing {

std::vector<std::string> CurrentEnvironment() {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    env.emplace_back(*e);
  }
  return env;
}

pid_t SpawnChild(const ChildSpec& spec, std::string& error) {
  if (spec.argv.empty()) {
    error = "SpawnChild: empty argv";
    return -1;
  }
  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls are allowed (the parent may have other threads).
  std::vector<std::string> args = spec.argv;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env = spec.env;
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const bool one_log = spec.stdout_path == spec.stderr_path;
  const long max_fd = ::sysconf(_SC_OPEN_MAX);
  const int max_close = max_fd > 0 && max_fd < 65536 ? static_cast<int>(max_fd) : 65536;
  const pid_t parent = ::getpid();

  const pid_t pid = ::fork();
  if (pid < 0) {
    error = std::string("fork: ") + std::strerror(errno);
    return -1;
  }
  if (pid == 0) {
    // The child must not outlive the thread that started it.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) {
      ::_exit(127);
    }
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD}) {
      ::signal(sig, SIG_DFL);
    }
    // Raw descriptors on purpose, not Fd: in the forked child they become its stdin, stdout and
    // stderr (dup2) and the close_range below closes the originals; the child leaves only by
    // execve or _exit, so no destructor would ever run.
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(spec.stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err =
        one_log ? out : ::open(spec.stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 ||
        ::dup2(err, 2) < 0) {
      ::_exit(127);
    }
    // Leave the parent's other descriptors (database, sockets) behind.
    if (::syscall(SYS_close_range, 3U, ~0U, 0U) != 0) {
      for (int fd = 3; fd < max_close; ++fd) ::close(fd);
    }
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

std::optional<int> WaitForExit(pid_t pid, std::chrono::milliseconds timeout,
                               std::chrono::milliseconds poll, std::string& error) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      return status;
    }
    if (done < 0 && errno != EINTR) {
      error = "waitpid(" + std::to_string(pid) + "): " + std::strerror(errno);
      return std::nullopt;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    std::this_thread::sleep_for(poll);
  }
}

std::optional<int> KillAndReap(pid_t pid, std::string& error) {
  (void)::kill(pid, SIGKILL);
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  if (done != pid) {
    error = "waitpid(" + std::to_string(pid) + ") after SIGKILL: " + std::strerror(errno);
    return std::nullopt;
  }
  return status;
}

}  // namespace room_outbox::testing
