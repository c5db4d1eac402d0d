// gMock double of OutboxStore, one method per interface method.
#pragma once

#include <gmock/gmock.h>

#include "outbox_store.h"

namespace room_outbox::testing {

class MockOutboxStore : public OutboxStore {
 public:
  MOCK_METHOD(Result<CommitWrite>, CommitCommand,
              (const CommitRequest& request, const CallerStatements& caller_statements),
              (override));
  MOCK_METHOD(Result<std::optional<FoundCommand>>, FindCommand, (const std::string& command_id),
              (override));
  MOCK_METHOD(Result<Claim>, ClaimDue, (const ClaimOptions& options), (override));
  MOCK_METHOD(Result<size_t>, MarkPublished,
              (const std::string& token, std::span<const int64_t> ids), (override));
  MOCK_METHOD(Result<size_t>, MarkFailed,
              (const std::string& token, std::span<const FailedAttempt> attempts), (override));
  MOCK_METHOD(Result<size_t>, MarkParked,
              (const std::string& token, std::span<const FailedAttempt> attempts), (override));
  MOCK_METHOD(Result<size_t>, Release, (const std::string& token, std::span<const int64_t> ids),
              (override));
  MOCK_METHOD(Result<OutboxStats>, Stats, (), (override));
};

}  // namespace room_outbox::testing
