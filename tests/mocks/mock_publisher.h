// gMock double of Publisher.
#pragma once

#include <gmock/gmock.h>

#include "core/publisher.h"

namespace room_outbox::testing {

class MockPublisher : public core::Publisher {
 public:
  MOCK_METHOD(core::PublishOutcome, Publish,
              (const core::PublishMessage& message, std::chrono::milliseconds timeout), (override));
  MOCK_METHOD(bool, Sends, (std::string_view event_type), (const, override));
  MOCK_METHOD(std::vector<core::PublishOutcome>, PublishMany,
              (std::span<const core::PublishMessage> messages, std::chrono::milliseconds timeout,
               size_t max_in_flight),
              (override));
  MOCK_METHOD(bool, breaker_open, (), (const, override));
  MOCK_METHOD(void, ReloadSecretKey, (std::string secret_key), (override));

  // Makes PublishMany call Publish once per message, in order, so tests can script outcomes per
  // event with EXPECT_CALL(Publish) alone.
  void DelegateManyToPublish() {
    ON_CALL(*this, PublishMany)
        .WillByDefault([this](std::span<const core::PublishMessage> messages,
                              std::chrono::milliseconds timeout, size_t) {
          std::vector<core::PublishOutcome> out;
          for (const core::PublishMessage& m : messages) {
            out.push_back(Publish(m, timeout));
          }
          return out;
        });
  }
};

// Matches a PublishMessage whose envelope has this event_id.
inline auto EventIdIs(const std::string& event_id) {
  return ::testing::Field(&core::PublishMessage::envelope,
                          ::testing::Field(&Envelope::event_id, event_id));
}

inline core::PublishOutcome Published() {
  core::PublishOutcome out{core::PublishStatus::kPublished, "", 200, 0, {}};
  out.scope = core::FailureScope::kNone;
  return out;
}
inline core::PublishOutcome Skipped() {
  core::PublishOutcome out{core::PublishStatus::kSkipped, "", 0, 0, {}};
  out.scope = core::FailureScope::kNone;
  return out;
}
// A failure with the scope its status usually has: kPermanent -> undeliverable row, kRateLimited ->
// global rate, kNotAttempted -> app, anything else -> row.
inline core::PublishOutcome FailedWith(core::PublishStatus status, std::string error) {
  core::PublishOutcome out{status, std::move(error), 0, 0, {}};
  switch (status) {
    case core::PublishStatus::kPermanent:
      out.scope = core::FailureScope::kUndeliverableRow;
      break;
    case core::PublishStatus::kRateLimited:
      out.scope = core::FailureScope::kGlobalRate;
      break;
    case core::PublishStatus::kNotAttempted:
      out.scope = core::FailureScope::kApp;
      break;
    default:
      out.scope = core::FailureScope::kRow;
      break;
  }
  return out;
}
inline core::PublishOutcome FailedWith(core::PublishStatus status, std::string error,
                                       core::FailureScope scope) {
  core::PublishOutcome out{status, std::move(error), 0, 0, {}};
  out.scope = scope;
  return out;
}

}  // namespace room_outbox::testing
