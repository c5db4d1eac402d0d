// gMock double of HookStore, one method per interface method; IdsAre matches the row ids a mark
// or a release receives, LostMark is a mark's answer when the connection went away under it.
#pragma once

#include <gmock/gmock.h>

#include <cstdint>
#include <vector>

#include "store/hook_store.h"

namespace room_outbox::testing {

class MockHookStore : public internal::HookStore {
 public:
  MOCK_METHOD(core::Result<internal::CommitWrite>, CommitCommand,
              (const internal::CommitRequest& request, const CallerStatements& caller_statements),
              (override));
  MOCK_METHOD(core::Result<std::optional<internal::FoundCommand>>, FindCommand,
              (const std::string& command_id), (override));
  MOCK_METHOD(core::Result<bool>, ServerReadOnly, (), (override));
  MOCK_METHOD(core::Result<size_t>, MarkPublished,
              (const std::string& token, std::span<const int64_t> ids), (override));
  MOCK_METHOD(core::Result<size_t>, Release,
              (const std::string& token, std::span<const int64_t> ids), (override));
  MOCK_METHOD(core::Result<size_t>, RecordPackSize,
              (const std::string& token, int64_t first_row_id, size_t events), (override));
};

MATCHER_P(IdsAre, expected, "") { return std::vector<int64_t>(arg.begin(), arg.end()) == expected; }

inline core::Result<size_t> LostMark() {
  return core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute(mark_published): server gone");
}

}  // namespace room_outbox::testing
