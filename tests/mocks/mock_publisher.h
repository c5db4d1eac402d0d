// gMock double of Publisher.
#pragma once

#include <gmock/gmock.h>

#include "publisher.h"

namespace room_outbox::testing {

class MockPublisher : public Publisher {
 public:
  MOCK_METHOD(PublishOutcome, Publish,
              (const Envelope& envelope, std::chrono::milliseconds timeout), (override));
  MOCK_METHOD(bool, Sends, (std::string_view event_type), (const, override));
  MOCK_METHOD(std::vector<PublishOutcome>, PublishMany,
              (std::span<const Envelope> envelopes, std::chrono::milliseconds timeout,
               size_t max_in_flight),
              (override));

  // Makes PublishMany call Publish once per envelope, in order, so tests can script outcomes per
  // event with EXPECT_CALL(Publish) alone.
  void DelegateManyToPublish() {
    ON_CALL(*this, PublishMany)
        .WillByDefault([this](std::span<const Envelope> envelopes,
                              std::chrono::milliseconds timeout, size_t) {
          std::vector<PublishOutcome> out;
          for (const Envelope& e : envelopes) {
            out.push_back(Publish(e, timeout));
          }
          return out;
        });
  }
};

inline PublishOutcome Published() { return PublishOutcome{PublishStatus::kPublished, "", 200, 0, {}}; }
inline PublishOutcome Skipped() { return PublishOutcome{PublishStatus::kSkipped, "", 0, 0, {}}; }
inline PublishOutcome FailedWith(PublishStatus status, std::string error) {
  return PublishOutcome{status, std::move(error), 0, 0, {}};
}

}  // namespace room_outbox::testing
