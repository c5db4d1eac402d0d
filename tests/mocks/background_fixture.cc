#include "background_fixture.h"

#include <chrono>
#include <utility>

#include "sync_breaker.h"

namespace room_outbox::testing {

using ::testing::StrictMock;

internal::BackgroundPublisher::Options BackgroundFixture::DefaultOptions(size_t capacity) {
  return internal::BackgroundPublisher::Options{
      capacity, std::chrono::milliseconds(2000), {}, &counters_};
}

void BackgroundFixture::Start(const internal::BackgroundPublisher::Options& options) {
  auto store = std::make_unique<StrictMock<MockHookStore>>();
  auto publisher = std::make_unique<StrictMock<MockPublisher>>();
  store_ = store.get();
  publisher_ = publisher.get();
  background_ = std::make_unique<internal::BackgroundPublisher>(
      options, std::move(store), std::move(publisher), internal::MakeSyncBreaker(), clock_, wake_);
}

internal::BackgroundJob BackgroundFixture::Job(const std::string& token, const std::string& room,
                                               const std::vector<int64_t>& ids) {
  internal::BackgroundJob job{token, room, clock_.SteadyMs() + 2000, {}, false};
  for (int64_t id : ids) {
    job.rows.push_back(internal::BackgroundRow{id,
                                               Envelope{"evt-" + std::to_string(id), "RoomGiftSent",
                                                        room, 1, "cmd", "req", "node", 1, "{}"},
                                               ""});
  }
  return job;
}

bool BackgroundFixture::Offer(internal::BackgroundJob job, bool earlier_pending) {
  EXPECT_TRUE(background_->Reserve());
  const internal::RoomView view = background_->View(job.room_id);
  return background_->Offer(std::move(job), view, earlier_pending);
}

}  // namespace room_outbox::testing
