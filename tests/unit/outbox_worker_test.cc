// OutboxWorker end to end: a round's steps together, Drain and the worker's options.
#include "worker/outbox_worker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/envelope_codec.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Invoke;
using ::testing::Return;

// The worker's collaborators, options and recorded marks: tests/mocks/worker_fixture.h.
class OutboxWorkerTest : public ::room_outbox::testing::WorkerFixture {};

TEST_F(OutboxWorkerTest, SuccessMarksThatRowPublished) {
  relay::ClaimOptions seen;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([&](const relay::ClaimOptions& o) {
    seen = o;
    return core::Result<relay::Claim>(MakeClaim({Row(7, "room-a")}));
  }));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();

  EXPECT_EQ(seen.limit, 100u);
  EXPECT_EQ(seen.lease_ms, 30000);
  EXPECT_TRUE(seen.rooms.per_room_order);
  ASSERT_EQ(calls_.size(), 1u);
  EXPECT_THAT(calls_[0], ElementsAre("evt-7"));
  EXPECT_THAT(published_, ElementsAre(7));
  EXPECT_TRUE(failed_.empty());
  EXPECT_EQ(r.marks.published, 1u);
  EXPECT_FALSE(r.error);
  EXPECT_EQ(metrics_.publish_success(), 1u);
}

TEST_F(OutboxWorkerTest, FailureThenSuccessOnTheNextRound) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 1)})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kUnknown, "timeout after 3000ms")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  worker.RunRound();
  EXPECT_THAT(FailedIds(), ElementsAre(1));
  EXPECT_TRUE(published_.empty());
  clock_.Advance(milliseconds(1000));
  worker.RunRound();
  EXPECT_THAT(published_, ElementsAre(1));
  EXPECT_EQ(calls_.size(), 2u);
}

TEST_F(OutboxWorkerTest, DrainStopsWhenNothingIsDueAndReportsFailures) {
  options_.batch_size = 2;
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(3, "room-c")})))
      .WillOnce(Return(MakeClaim({})));
  outcomes_["evt-2"] = {FailedWith(core::PublishStatus::kRetryable, "http 500")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(d.rounds, 3u);
  EXPECT_EQ(d.published, 2u);
  EXPECT_EQ(d.failed, 1u);
  EXPECT_FALSE(d.ok());
  EXPECT_TRUE(clock_.sleeps().empty()) << "--once never waits for a tick";
}

TEST_F(OutboxWorkerTest, DrainTriesEachRowOnceEvenWhenItComesDueAgain) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(1, "room-a", "RoomGiftSent", 1), Row(4, "room-a")})));
  outcomes_["evt-1"] = {FailedWith(core::PublishStatus::kRetryable, "http 500")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(calls_.size(), 1u);
  // Row 1 came due again: given back, and row 4 waits behind it (same room).
  EXPECT_THAT(released_, ElementsAre(1, 4));
  EXPECT_EQ(d.failed, 1u);
  EXPECT_EQ(d.rounds, 2u);
}

TEST_F(OutboxWorkerTest, DrainReportsADatabaseError) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "no server")));
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  ASSERT_TRUE(d.store_error);
  EXPECT_EQ(d.store_error->code, ErrorCode::kUnavailable);
  EXPECT_FALSE(d.ok());
}

TEST_F(OutboxWorkerTest, DrainWithEverythingDeliveredIsOk) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a")})))
      .WillOnce(Return(MakeClaim({})));
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_TRUE(d.ok());
  EXPECT_EQ(d.published, 1u);
}

TEST_F(OutboxWorkerTest, AClaimGivenBackWholeUnsentIsAFailedRoundAndIsNotRetriedAtOnce) {
  // Lease 5s, margin 1s, publish_timeout 3s: a claim that took 2.5s leaves 1.5s for a wave.
  options_.lease = milliseconds(5000);
  options_.batch_size = 3;
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(
        MakeClaim({Row(1, "room-a"), Row(2, "room-b"), Row(3, "room-c")}));
  }));
  RecordMarks();  // StrictMock publisher: no PublishMany expected
  clock_.on_sleep = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_THAT(released_, ElementsAre(1, 2, 3));
  EXPECT_THAT(metrics_.RenderPrometheus(), HasSubstr("room_outbox_round_errors_total 1\n"));
  EXPECT_THAT(log_.str(), HasSubstr("claim given back whole without an attempt: a failed round"));
  EXPECT_THAT(log_.str(), HasSubstr("lease_left_ms=2500"));
  // A full claim, yet the loop waits poll_interval instead of claiming again at once.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

TEST_F(OutboxWorkerTest, AClaimGivenBackWholeReportsAnErrorButNoStoreError) {
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a")}));
  }));
  RecordMarks();
  auto worker = MakeWorker();
  RoundResult r = worker.RunRound();
  EXPECT_TRUE(r.released_unsent);
  ASSERT_TRUE(r.error);
  EXPECT_FALSE(r.store_error);
  EXPECT_THAT(r.error->message, HasSubstr("given back unsent"));
  EXPECT_EQ(r.marks.released, 1u);
}

TEST_F(OutboxWorkerTest, DrainThatLeftDueRowsUnattemptedIsNotOk) {
  options_.lease = milliseconds(5000);
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Invoke([this](const relay::ClaimOptions&) {
    clock_.Advance(milliseconds(2500));
    return core::Result<relay::Claim>(MakeClaim({Row(1, "room-a"), Row(2, "room-b")}));
  }));
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_EQ(d.failed, 0u);
  EXPECT_EQ(d.unattempted, 2u);
  EXPECT_FALSE(d.ok()) << "--once must not exit 0 with due rows never tried";
}

TEST_F(OutboxWorkerTest, DrainRowsGivenBackAndTriedInALaterRoundCountAsAttempted) {
  // Rate limited: row 3 is given back, then claimed again and delivered in the next round.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(2, "room-b"), Row(3, "room-b")})))
      .WillOnce(Return(MakeClaim({Row(3, "room-b")})))
      .WillOnce(Return(MakeClaim({})));
  outcomes_["evt-2"] = {FailedWith(core::PublishStatus::kRateLimited, "im error 10023")};
  ScriptPublisher();
  RecordMarks();
  auto worker = MakeWorker();
  DrainResult d = worker.Drain();
  EXPECT_THAT(released_, ElementsAre(3));
  EXPECT_THAT(published_, ElementsAre(3));
  EXPECT_EQ(d.unattempted, 0u);
  EXPECT_EQ(d.failed, 1u);
}

TEST(WorkerConfigTest, OptionsNoConfigCanProduceAreRefused) {
  WorkerConfig config;
  EXPECT_FALSE(CheckWorkerConfig(config).has_value());
  config.lease = milliseconds(4500);  // < publish_timeout 3s + kLeaseMargin 2s
  auto broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "lease");
  EXPECT_EQ(broken->fallback_key, "publish_timeout");
  config.lease = milliseconds(30000);
  config.max_in_flight = 0;
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "max_in_flight");
  config.max_in_flight = 4;
  config.poll_interval = milliseconds(0);
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "poll_interval");
  config.poll_interval = milliseconds(1000);
  config.room_min_interval = milliseconds(-1);
  broken = CheckWorkerConfig(config);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->key, "room_min_interval");
}

TEST_F(OutboxWorkerTest, ToWorkerOptionsTakesTheConfigsValues) {
  WorkerConfig config;
  config.batch_size = 7;
  config.ordering = Ordering::kNone;
  WorkerOptions o = ToWorkerOptions(config, "node-x", {"RoomCreated"});
  EXPECT_EQ(o.batch_size, 7u);
  EXPECT_FALSE(o.per_room_order());
  EXPECT_EQ(o.lease, WorkerConfig{}.lease);
  EXPECT_EQ(o.node_id, "node-x");
  EXPECT_THAT(o.skip_event_types, ElementsAre("RoomCreated"));
}

// --- failure scopes ---

}  // namespace
}  // namespace room_outbox::relay
