#include "support/relay_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string_view>

#include "support/child_process.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

// Environment variables the child must not inherit: they would override the config's secret
// files or node_id, or make the relay report to the test runner's systemd or journal.
constexpr std::string_view kDroppedEnv[] = {
    "ROOM_OUTBOX_NODE_ID=",
    "ROOM_OUTBOX_TIM_SECRET_KEY=",
    "ROOM_OUTBOX_MYSQL_PASSWORD=",
    "CREDENTIALS_DIRECTORY=",
    "NOTIFY_SOCKET=",
    "JOURNAL_STREAM=",
};

// A TOML basic string.
std::string TomlString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

bool WriteFile(const std::string& path, const std::string& content, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out.good()) {
      return false;
    }
  }
  return ::chmod(path.c_str(), mode) == 0;
}

ProcessExit FromWaitStatus(int status) {
  ProcessExit exit;
  if (WIFEXITED(status)) {
    exit.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    exit.signal = WTERMSIG(status);
    exit.core_dumped = WCOREDUMP(status);
  }
  return exit;
}

// Writes the [section] with `defaults` overridden by `overrides` (both key -> TOML value text).
void WriteSection(std::ostream& out, std::string_view name,
                  std::map<std::string, std::string> defaults,
                  const std::map<std::string, std::string>& overrides) {
  for (const auto& [key, value] : overrides) {
    defaults[key] = value;
  }
  out << "\n[" << name << "]\n";
  for (const auto& [key, value] : defaults) {
    out << key << " = " << value << "\n";
  }
}

}  // namespace

std::string Describe(const ProcessExit& exit) {
  if (exit.exited()) {
    return "exit code " + std::to_string(exit.exit_code);
  }
  const char* name = sigabbrev_np(exit.signal);
  return "killed by signal " + std::to_string(exit.signal) + " (SIG" +
         (name != nullptr ? name : "?") + ")";
}

std::string RelayProcess::BinaryPath() {
  return std::string(ROOM_OUTBOX_BINARY_DIR) + "/outbox-relay";
}

RelayProcess::RelayProcess(const TestDatabase& db, const FakeImServer& im,
                           RelayProcessOptions options)
    : RelayProcess(db.Options(), im, std::move(options)) {}

RelayProcess::RelayProcess(const MysqlOptions& mysql, const FakeImServer& im,
                           RelayProcessOptions options)
    : options_(std::move(options)) {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "room-outbox-relay-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp(" << pattern << "): " << std::strerror(errno);
    return;
  }
  dir_ = pattern;
  config_path_ = dir_ + "/relay.toml";
  stderr_path_ = dir_ + "/stderr.log";
  stdout_path_ = dir_ + "/stdout.log";
  const std::string key_path = dir_ + "/tim-secret-key";

  const TencentImOptions client = im.ClientOptions();
  std::ostringstream config;
  config << "# Written by RelayProcess for one integration test.\n"
         << "node_id = " << TomlString(options_.node_id) << "\n";
  WriteSection(config, "mysql",
               {{"socket", TomlString(mysql.socket)},
                {"user", TomlString(mysql.user)},
                {"database", TomlString(mysql.database)},
                {"connect_timeout", "\"5s\""},
                {"dialect", TomlString(SqlDialectName(mysql.dialect))}},
               options_.mysql);
  WriteSection(config, "outbox_worker",
               {{"poll_interval", "\"200ms\""},
                {"publish_timeout", "\"3s\""},
                {"lease", "\"30s\""},
                {"room_min_interval", "\"0ms\""}},
               options_.outbox_worker);
  WriteSection(config, "tencent_im",
               {{"endpoint", TomlString(client.endpoint)},
                {"sdk_app_id", std::to_string(client.sdk_app_id)},
                {"admin_identifier", TomlString(client.admin_identifier)},
                {"group_id_prefix", TomlString(client.group_id_prefix)},
                {"secret_key_file", TomlString(key_path)},
                {"requests_per_second", "0"}},
               options_.tencent_im);
  WriteSection(config, "log", {{"level", TomlString(options_.log_level)}, {"format", "\"text\""}},
               {});

  const std::string& key = options_.secret_key.empty() ? client.secret_key : options_.secret_key;
  if (!WriteFile(key_path, key + "\n", 0600) || !WriteFile(config_path_, config.str(), 0644)) {
    ADD_FAILURE() << "cannot write the relay config under " << dir_ << ": " << std::strerror(errno);
    return;
  }
  prepared_ = true;
}

RelayProcess::~RelayProcess() {
  if (running()) {
    (void)Kill();
  }
  if (!dir_.empty() && ::testing::Test::HasFailure()) {
    // Keep the config and the log of a failed test for a post-mortem.
    std::cerr << "relay " << options_.node_id << ": files kept in " << dir_ << "\n";
  } else if (!dir_.empty()) {
    std::error_code ignored;  // a leftover temp directory is not worth failing a test for
    std::filesystem::remove_all(dir_, ignored);
  }
}

bool RelayProcess::Start() {
  if (!prepared_) {
    ADD_FAILURE() << "relay config was not written; cannot start";
    return false;
  }
  if (running()) {
    ADD_FAILURE() << "relay " << options_.node_id << " is already running (pid " << pid_ << ")";
    return false;
  }
  exit_.reset();

  ChildSpec spec;
  spec.argv = {BinaryPath(), "--config", config_path_};
  spec.argv.insert(spec.argv.end(), options_.args.begin(), options_.args.end());
  std::vector<std::string_view> dropped_env(std::begin(kDroppedEnv), std::end(kDroppedEnv));
  for (const std::string& entry : options_.env) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      ADD_FAILURE() << "environment entry without NAME=: " << entry;
      return false;
    }
    dropped_env.push_back(std::string_view(entry).substr(0, eq + 1));
  }
  for (std::string& entry : CurrentEnvironment()) {
    bool dropped = false;
    for (std::string_view prefix : dropped_env) {
      dropped = dropped || std::string_view(entry).substr(0, prefix.size()) == prefix;
    }
    if (!dropped) spec.env.push_back(std::move(entry));
  }
  spec.env.insert(spec.env.end(), options_.env.begin(), options_.env.end());
  spec.stdout_path = stdout_path_;
  spec.stderr_path = stderr_path_;

  std::string error;
  const pid_t pid = SpawnChild(spec, error);
  if (pid < 0) {
    ADD_FAILURE() << error;
    return false;
  }
  pid_ = pid;
  return true;
}

bool RelayProcess::Signal(int sig) {
  if (!running()) {
    return false;
  }
  return ::kill(pid_, sig) == 0;
}

std::optional<ProcessExit> RelayProcess::Wait(std::chrono::milliseconds timeout) {
  if (!running()) {
    return exit_;
  }
  std::string error;
  const std::optional<int> status =
      WaitForExit(pid_, timeout, std::chrono::milliseconds(5), error);
  if (status) {
    exit_ = FromWaitStatus(*status);
    pid_ = -1;
    return exit_;
  }
  if (!error.empty()) {
    ADD_FAILURE() << error;
    pid_ = -1;
  }
  return std::nullopt;
}

bool RelayProcess::Alive() { return running() && !Wait(std::chrono::milliseconds(0)); }

std::optional<ProcessExit> RelayProcess::Stop(std::chrono::milliseconds timeout) {
  if (!Signal(SIGTERM)) {
    return exit_;
  }
  return Wait(timeout);
}

std::optional<ProcessExit> RelayProcess::Kill() {
  if (!running()) {
    return std::nullopt;
  }
  std::string error;
  if (const std::optional<int> status = KillAndReap(pid_, error)) {
    exit_ = FromWaitStatus(*status);
  } else {
    ADD_FAILURE() << error;
  }
  pid_ = -1;
  return exit_;
}

std::string RelayProcess::Stderr() const {
  std::ifstream in(stderr_path_, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string RelayProcess::StderrTail(size_t lines) const {
  std::vector<std::string> all;
  std::istringstream in(Stderr());
  for (std::string line; std::getline(in, line);) {
    all.push_back(std::move(line));
  }
  std::string out = "--- " + options_.node_id + " stderr (" + stderr_path_ + "), last " +
                    std::to_string(std::min(lines, all.size())) + " lines ---\n";
  for (size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i) {
    out += all[i] + "\n";
  }
  return out;
}

size_t RelayProcess::CountLogLines(const std::vector<std::string>& parts) const {
  std::istringstream in(Stderr());
  size_t count = 0;
  for (std::string line; std::getline(in, line);) {
    bool all = true;
    for (const std::string& part : parts) {
      all = all && line.find(part) != std::string::npos;
    }
    count += all ? 1 : 0;
  }
  return count;
}

}  // namespace room_outbox::testing
