// RelayProcess: runs the real outbox-relay binary (the one the build produced) against a
// TestDatabase and a FakeImServer, for integration tests of the daemon as a process: several
// relays on one database, kill -9, signals and exit codes.
//
// Each RelayProcess owns a private temporary directory holding
//   relay.toml      the config: [mysql] aimed at the test database (or any MysqlOptions) over
//                   its unix socket, [tencent_im] aimed at the fake server (endpoint, app id,
//                   identifier, prefix), the secret key read from a file, no metrics endpoint,
//                   and the caller's [mysql] / [outbox_worker] / [tencent_im] keys on top;
//   tim-secret-key  the IM secret key (mode 0600), named by secret_key_file;
//   stderr.log      the child's stderr (the relay's log), stdout.log its stdout.
// The directory is removed by the destructor.
//
// The child gets the test's environment minus the variables that would change what it reads or
// where it reports (ROOM_OUTBOX_NODE_ID, ROOM_OUTBOX_TIM_SECRET_KEY, ROOM_OUTBOX_MYSQL_PASSWORD,
// CREDENTIALS_DIRECTORY, NOTIFY_SOCKET, JOURNAL_STREAM) plus the caller's RelayProcessOptions::env, an empty signal
// mask, default signal dispositions, stdin from /dev/null, and SIGKILL when the thread that
// started it dies (so a crashed test leaves no relay behind).
//
// RAII: the destructor kills (SIGKILL) and reaps a child that is still running.
// Thread-safety: none; drive a RelayProcess from one thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "room_outbox/options.h"

namespace room_outbox::testing {

class FakeImServer;
class TestDatabase;

// How a child ended.
struct ProcessExit {
  int exit_code = -1;  // the exit status when it exited normally, else -1
  int signal = 0;      // the signal that ended it, else 0
  bool core_dumped = false;  // the kernel wrote a core file when the signal ended it
  bool exited() const { return signal == 0; }
};

// Prints "exit code N" or "killed by signal N (NAME)".
std::string Describe(const ProcessExit& exit);

struct RelayProcessOptions {
  std::string node_id = "relay-test";
  // Keys of [mysql], [outbox_worker] and [tencent_im] as TOML value text, written after (and
  // overriding) the defaults below, e.g. {"poll_interval", "\"200ms\""}, {"batch_size", "50"}.
  // [mysql] defaults: socket, user and database of the MysqlOptions given to the constructor,
  //   connect_timeout "5s" (host, port and password are not written).
  // [outbox_worker] defaults: poll_interval "200ms", publish_timeout "3s", lease "30s",
  //   room_min_interval "0ms" (the other keys take the relay's own defaults).
  // [tencent_im] defaults: the fake's endpoint, sdk_app_id, admin_identifier and
  //   group_id_prefix, secret_key_file, requests_per_second 0 (unlimited).
  std::map<std::string, std::string> mysql;
  std::map<std::string, std::string> outbox_worker;
  std::map<std::string, std::string> tencent_im;
  std::string log_level = "info";
  // Extra command-line arguments after --config, e.g. {"--once"}.
  std::vector<std::string> args;
  // "NAME=value" entries added to the child's environment, replacing an inherited variable of
  // that name; they may set the ones dropped by default, e.g. "NOTIFY_SOCKET=/tmp/x/notify.sock".
  std::vector<std::string> env;
  // The secret key written to the key file; empty: the fake server's key.
  std::string secret_key;
};

class RelayProcess {
 public:
  // Writes the config and key file; does not start the process (see Start). On a failure to
  // write them the test fails (ADD_FAILURE) and Start() returns false.
  RelayProcess(const TestDatabase& db, const FakeImServer& im, RelayProcessOptions options = {});
  // The same against any database reachable over a unix socket (`mysql.socket`), e.g. a server of
  // the test's own or one that is not there at all.
  RelayProcess(const MysqlOptions& mysql, const FakeImServer& im, RelayProcessOptions options = {});
  ~RelayProcess();
  RelayProcess(const RelayProcess&) = delete;
  RelayProcess& operator=(const RelayProcess&) = delete;

  // The outbox-relay binary of this build tree.
  static std::string BinaryPath();

  // Spawns the relay. False (with a test failure recorded) when it could not be started or one
  // is already running.
  bool Start();

  pid_t pid() const { return pid_; }
  // True while the child has been started and not yet reaped.
  bool running() const { return pid_ > 0; }
  // Reaps the child if it has ended (without waiting); true while it is still running.
  bool Alive();

  // Sends `sig` to the running child; false when there is none or kill() failed.
  bool Signal(int sig);

  // Waits up to `timeout` for the child to end and reaps it. nullopt on timeout (the child keeps
  // running) or when no child was started. Once reaped, later calls return the same result.
  std::optional<ProcessExit> Wait(std::chrono::milliseconds timeout);

  // SIGTERM, then Wait(timeout).
  std::optional<ProcessExit> Stop(std::chrono::milliseconds timeout);

  // SIGKILL and reap (kill -9). Returns how it ended, or nullopt when nothing was running.
  std::optional<ProcessExit> Kill();

  const std::string& dir() const { return dir_; }
  const std::string& config_path() const { return config_path_; }
  const std::string& stderr_path() const { return stderr_path_; }
  const RelayProcessOptions& options() const { return options_; }

  // The child's stderr so far (the relay's log).
  std::string Stderr() const;
  // The last `lines` lines of it, for failure messages.
  std::string StderrTail(size_t lines = 40) const;
  // How many lines of the log contain every one of `parts`.
  size_t CountLogLines(const std::vector<std::string>& parts) const;

 private:
  RelayProcessOptions options_;
  std::string dir_;
  std::string config_path_;
  std::string stderr_path_;
  std::string stdout_path_;
  bool prepared_ = false;
  pid_t pid_ = -1;
  std::optional<ProcessExit> exit_;
};

}  // namespace room_outbox::testing
