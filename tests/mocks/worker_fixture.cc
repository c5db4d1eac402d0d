#include "worker_fixture.h"

#include <utility>

namespace room_outbox::testing {

using std::chrono::milliseconds;
using ::testing::_;
using ::testing::AnyNumber;
using ::testing::Return;

WorkerFixture::WorkerFixture()
    : logger_(relay::MakeStreamLogger(log_, relay::LogFormat::kText, spdlog::level::trace)) {
  options_.node_id = "node-1";
  options_.poll_interval = milliseconds(1000);
  options_.batch_size = 100;
  options_.publish_timeout = milliseconds(3000);
  options_.max_in_flight = 4;
  options_.ordering = relay::Ordering::kPerRoom;
  options_.lease = milliseconds(30000);
  options_.room_min_interval = milliseconds(0);
  // Stats only feeds gauges; tests of other behaviour do not care how often it runs.
  EXPECT_CALL(store_, Stats()).Times(AnyNumber()).WillRepeatedly(Return(relay::OutboxStats{}));
  EXPECT_CALL(publisher_, Sends(_)).Times(AnyNumber()).WillRepeatedly([this](std::string_view t) {
    return not_sent_.count(std::string(t)) == 0;
  });
  EXPECT_CALL(publisher_, breaker_open()).Times(AnyNumber()).WillRepeatedly([this] {
    return breaker_open_;
  });
}

relay::OutboxWorker WorkerFixture::MakeWorker(relay::RelayStore* ahead) {
  return relay::OutboxWorker(options_, store_, publisher_, clock_, stop_, metrics_, *logger_, {},
                             ahead);
}

relay::Claim WorkerFixture::MakeClaim(const std::string& token,
                                      std::vector<relay::OutboxRow> rows) {
  relay::Claim c = WorkerClaim(token, std::move(rows));
  c.server_now_ms = clock_.NowMs();
  c.lease_until_ms = c.server_now_ms + options_.lease.count();
  return c;
}

void WorkerFixture::ScriptPublisher() {
  EXPECT_CALL(publisher_, PublishMany(_, _, _))
      .WillRepeatedly([this](std::span<const core::PublishMessage> messages, milliseconds timeout,
                             size_t max_in_flight) {
        EXPECT_EQ(timeout, options_.publish_timeout);
        EXPECT_EQ(max_in_flight, options_.max_in_flight);
        std::vector<std::string> ids;
        std::vector<core::PublishOutcome> out;
        for (const core::PublishMessage& m : messages) {
          std::string id = m.envelope.event_id;
          for (const core::PackedEvent& e : m.rest) id += "+" + e.envelope->event_id;
          ids.push_back(id);
          std::deque<core::PublishOutcome>& queue = outcomes_[m.envelope.event_id];
          if (queue.empty()) {
            out.push_back(Published());
          } else {
            out.push_back(queue.front());
            queue.pop_front();
          }
        }
        calls_.push_back(ids);
        if (during_publish_) during_publish_();
        return out;
      });
}

void WorkerFixture::RecordMarks() {
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillRepeatedly([this](const std::string&, std::span<const int64_t> ids,
                             std::span<const relay::AttemptNote>) {
        published_.insert(published_.end(), ids.begin(), ids.end());
        ++mark_published_calls_;
        return core::Result<size_t>(ids.size());
      });
  EXPECT_CALL(store_, MarkFailed(kToken, _))
      .WillRepeatedly([this](const std::string&, std::span<const relay::FailedAttempt> attempts) {
        failed_.insert(failed_.end(), attempts.begin(), attempts.end());
        return core::Result<size_t>(attempts.size());
      });
  EXPECT_CALL(store_, Release(kToken, _))
      .WillRepeatedly([this](const std::string&, std::span<const int64_t> ids) {
        released_.insert(released_.end(), ids.begin(), ids.end());
        return core::Result<size_t>(ids.size());
      });
}

void WorkerFixture::RecordParks() {
  EXPECT_CALL(store_, MarkParked(kToken, _))
      .WillRepeatedly([this](const std::string&, std::span<const relay::FailedAttempt> attempts) {
        parked_.insert(parked_.end(), attempts.begin(), attempts.end());
        return core::Result<size_t>(attempts.size());
      });
}

std::vector<int64_t> WorkerFixture::Ids(const std::vector<relay::FailedAttempt>& attempts) {
  std::vector<int64_t> ids;
  for (const relay::FailedAttempt& a : attempts) ids.push_back(a.id);
  return ids;
}

}  // namespace room_outbox::testing
