// RunRelayCommand: runs the built outbox-relay once with the given arguments (an operator
// subcommand, --check-config, ...) and collects its exit, stdout and stderr, for integration
// tests of the command-line surface. The child gets the test's environment minus the secret and
// systemd variables (as RelayProcess does), stdin from /dev/null, and is killed after `timeout`.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace room_outbox::testing {

struct CommandResult {
  int exit_code = -1;       // -1: killed, timed out or not started (see out_of_band)
  std::string out;          // stdout
  std::string err;          // stderr
  std::string out_of_band;  // why exit_code is -1
  // stdout parsed as one JSON object (discarded when it is not JSON).
  nlohmann::json Json() const;
  // For failure messages.
  std::string Describe() const;
};

CommandResult RunRelayCommand(const std::vector<std::string>& args,
                              std::chrono::milliseconds timeout = std::chrono::seconds(60));

}  // namespace room_outbox::testing
