#include "support/relay_command.h"

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/child_process.h"
#include "support/relay_process.h"

namespace room_outbox::testing {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool Dropped(const std::string& entry) {
  for (const char* name : {"ROOM_OUTBOX_NODE_ID=", "ROOM_OUTBOX_TIM_SECRET_KEY=",
                           "ROOM_OUTBOX_MYSQL_PASSWORD=",
                           "CREDENTIALS_DIRECTORY=", "NOTIFY_SOCKET=", "JOURNAL_STREAM="}) {
    if (entry.rfind(name, 0) == 0) return true;
  }
  return false;
}

}  // namespace

nlohmann::json CommandResult::Json() const {
  return nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
}

std::string CommandResult::Describe() const {
  std::ostringstream o;
  o << "exit " << exit_code << (out_of_band.empty() ? "" : " (" + out_of_band + ")")
    << "\nstdout: " << out << "\nstderr: " << err;
  return o.str();
}

CommandResult RunRelayCommand(const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout) {
  CommandResult result;
  char tmpl[] = "/tmp/relay-command-XXXXXX";
  const char* dir = mkdtemp(tmpl);
  if (dir == nullptr) {
    result.out_of_band = "mkdtemp failed";
    return result;
  }
  ChildSpec spec;
  spec.argv.push_back(RelayProcess::BinaryPath());
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  for (std::string& entry : CurrentEnvironment()) {
    if (!Dropped(entry)) spec.env.push_back(std::move(entry));
  }
  spec.stdout_path = std::string(dir) + "/stdout";
  spec.stderr_path = std::string(dir) + "/stderr";
  std::string error;
  const pid_t pid = SpawnChild(spec, error);
  if (pid < 0) {
    result.out_of_band = error;
  } else {
    auto status = WaitForExit(pid, timeout, std::chrono::milliseconds(10), error);
    if (!status) {
      (void)KillAndReap(pid, error);
      result.out_of_band = "timed out";
    } else if (WIFEXITED(*status)) {
      result.exit_code = WEXITSTATUS(*status);
    } else {
      result.out_of_band = "killed by signal " + std::to_string(WTERMSIG(*status));
    }
    result.out = ReadAll(spec.stdout_path);
    result.err = ReadAll(spec.stderr_path);
  }
  std::filesystem::remove_all(dir);
  return result;
}

}  // namespace room_outbox::testing
