// gMock double of RelayStore, one method per interface method.
#pragma once

#include <gmock/gmock.h>

#include "store/relay_store.h"

namespace room_outbox::testing {

class MockRelayStore : public relay::RelayStore {
 public:
  MOCK_METHOD(core::Result<relay::Claim>, ClaimDue, (const relay::ClaimOptions& options),
              (override));
  MOCK_METHOD(core::Result<bool>, AnyDue, (bool per_room_order), (override));
  MOCK_METHOD(core::Result<size_t>, MarkPublished,
              (const std::string& token, std::span<const int64_t> ids,
               std::span<const relay::AttemptNote> notes),
              (override));
  MOCK_METHOD(core::Result<size_t>, MarkFailed,
              (const std::string& token, std::span<const relay::FailedAttempt> attempts),
              (override));
  MOCK_METHOD(core::Result<size_t>, MarkParked,
              (const std::string& token, std::span<const relay::FailedAttempt> attempts),
              (override));
  MOCK_METHOD(core::Result<size_t>, Release,
              (const std::string& token, std::span<const int64_t> ids), (override));
  MOCK_METHOD(core::Result<relay::OutboxStats>, Stats, (), (override));
};

}  // namespace room_outbox::testing
