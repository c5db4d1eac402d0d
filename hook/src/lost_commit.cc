#include "lost_commit.h"

#include <utility>

namespace room_outbox::internal {
namespace {

// A server that cannot say (the read failed) is taken as writable: its answer stands.
bool ReadOnlyServer(HookStore& store) {
  auto read_only = store.ServerReadOnly();
  return read_only && *read_only;
}

}  // namespace

bool ResolveLostCommit(HookStore& store, const std::string& command_id, CommitWrite& write,
                       CommitResult& result, const LogCallback& log) {
  auto say = [&log](LogLevel level, const std::string& line) {
    if (log) {
      log(level, line);
    }
  };
  auto found = store.FindCommand(command_id);
  if (!found && IsRetryable(found.error())) {
    found = store.FindCommand(command_id);
  }
  if (!found) {
    result.status = CommitStatus::kUnknown;
    result.error = Error{
        write.commit_error.code,
        "commit outcome unknown (retry with the same command_id): " + write.commit_error.message +
            "; lookup failed: " + found.error().message};
    say(LogLevel::kError,
        "commit outcome unknown: command_id=" + command_id + " error=" + result.error.message);
    return false;
  }
  if (!found->has_value() && ReadOnlyServer(store)) {
    // The address may lead to another server since the COMMIT (a failover): a replica that has
    // not applied the command yet would say "not there" of a command that committed.
    result.status = CommitStatus::kUnknown;
    result.error =
        Error{write.commit_error.code,
              "commit outcome unknown (retry with the same command_id once the database accepts "
              "writes): the COMMIT answer was lost and the command is not in room_command_log of a "
              "read-only server, which may not have applied it yet: " +
                  write.commit_error.message};
    say(LogLevel::kError,
        "commit outcome unknown: command_id=" + command_id + " error=" + result.error.message);
    return false;
  }
  if (!found->has_value()) {
    result.error = Error{write.commit_error.code,
                         "rolled back (not in room_command_log after a lost COMMIT answer): " +
                             write.commit_error.message};
    say(LogLevel::kError,
        "commit failed: command_id=" + command_id + " error=" + result.error.message);
    return false;
  }
  say(LogLevel::kWarn,
      "COMMIT answer lost, the command log has it: committed: command_id=" + command_id);
  write.row_ids = std::move((*found)->row_ids);
  return true;
}

}  // namespace room_outbox::internal
