// gMock double of Publisher.
#pragma once

#include <gmock/gmock.h>

#include "core/publisher.h"

namespace room_outbox::testing {

class MockPublisher : public Publisher {
 public:
  MOCK_METHOD(PublishOutcome, Publish,
              (const PublishMessage& message, std::chrono::milliseconds timeout), (override));
  MOCK_METHOD(bool, Sends, (std::string_view event_type), (const, override));
  MOCK_METHOD(std::vector<PublishOutcome>, PublishMany,
              (std::span<const PublishMessage> messages, std::chrono::milliseconds timeout,
               size_t max_in_flight),
              (override));
  MOCK_METHOD(bool, breaker_open, (), (const, override));
  MOCK_METHOD(void, ReloadSecretKey, (std::string secret_key), (override));

  // Makes PublishMany call Publish once per message, in order, so tests can script outcomes per
  // event with EXPECT_CALL(Publish) alone.
  void DelegateManyToPublish() {
    ON_CALL(*this, PublishMany)
        .WillByDefault([this](std::span<const PublishMessage> messages,
                              std::chrono::milliseconds timeout, size_t) {
          std::vector<PublishOutcome> out;
          for (const PublishMessage& m : messages) {
            out.push_back(Publish(m, timeout));
          }
          return out;
        });
  }
};

// Matches a PublishMessage whose envelope has this event_id.
inline auto EventIdIs(const std::string& event_id) {
  return ::testing::Field(&PublishMessage::envelope,
                          ::testing::Field(&Envelope::event_id, event_id));
}

inline PublishOutcome Published() {
  PublishOutcome out{PublishStatus::kPublished, "", 200, 0, {}};
  out.scope = FailureScope::kNone;
  return out;
}
inline PublishOutcome Skipped() {
  PublishOutcome out{PublishStatus::kSkipped, "", 0, 0, {}};
  out.scope = FailureScope::kNone;
  return out;
}
// A failure with the scope its status usually has: kPermanent -> permanent row, kRateLimited ->
// global rate, kNotAttempted -> app, anything else -> row.
inline PublishOutcome FailedWith(PublishStatus status, std::string error) {
  PublishOutcome out{status, std::move(error), 0, 0, {}};
  switch (status) {
    case PublishStatus::kPermanent: out.scope = FailureScope::kPermanentRow; break;
    case PublishStatus::kRateLimited: out.scope = FailureScope::kGlobalRate; break;
    case PublishStatus::kNotAttempted: out.scope = FailureScope::kApp; break;
    default: out.scope = FailureScope::kRow; break;
  }
  return out;
}
inline PublishOutcome FailedWith(PublishStatus status, std::string error, FailureScope scope) {
  PublishOutcome out{status, std::move(error), 0, 0, {}};
  out.scope = scope;
  return out;
}

}  // namespace room_outbox::testing
