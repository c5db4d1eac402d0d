// OutboxWorker's claim ahead: the next claim runs on a second store while a round's waves are
// sent and marked on the first; a stop, a round that waits or a database error gives a claim
// made ahead back unattempted; its lease counts from its own start. Mock stores and publisher.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::Published;
using std::chrono::milliseconds;
using ::testing::_;
using ::testing::AnyNumber;
using ::testing::ElementsAre;
using ::testing::Invoke;
using ::testing::Return;

constexpr char kFirst[] = "claim-first";
constexpr char kAhead[] = "claim-ahead";

// The worker's collaborators (tests/mocks/worker_fixture.h) with a second store for the claim
// made ahead, claims of two rows sent one row per wave, and an ordered record of sends, marks,
// releases and claims made ahead (the claim made ahead runs on a thread of its own). The loop
// stops at its first sleep.
class OutboxWorkerAheadTest : public ::room_outbox::testing::WorkerFixture {
 protected:
  OutboxWorkerAheadTest() {
    options_.batch_size = 2;
    options_.max_in_flight = 1;  // one row per wave: a claim of 2 is 2 waves
    EXPECT_CALL(publisher_, PublishMany(_, _, _))
        .WillRepeatedly(
            Invoke([this](std::span<const core::PublishMessage> messages, milliseconds, size_t) {
              std::vector<core::PublishOutcome> out;
              for (const core::PublishMessage& m : messages) {
                Note("send " + m.envelope.event_id);
                out.push_back(Published());
              }
              if (during_publish_) during_publish_();
              return out;
            }));
    clock_.on_sleep = [this] { stop_.RequestStop(); };
  }

  OutboxWorker MakeWorker() { return WorkerFixture::MakeWorker(&ahead_store_); }

  void Note(const std::string& event) {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(event);
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool Seen(const std::string& event) {
    const std::vector<std::string> events = Events();
    return std::find(events.begin(), events.end(), event) != events.end();
  }
  size_t IndexOf(const std::string& event) {
    const std::vector<std::string> events = Events();
    return static_cast<size_t>(std::find(events.begin(), events.end(), event) - events.begin());
  }

  // Marks that succeed and are noted as "mark TOKEN ID..."; releases noted as "release ...".
  void NoteMarks(const std::string& token) {
    EXPECT_CALL(store_, MarkPublished(token, _, _))
        .WillRepeatedly(Invoke([this](const std::string& t, std::span<const int64_t> ids,
                                      std::span<const AttemptNote>) {
          Note("mark " + t + Ids(ids));
          return core::Result<size_t>(ids.size());
        }));
    EXPECT_CALL(store_, Release(token, _))
        .Times(AnyNumber())
        .WillRepeatedly(Invoke([this](const std::string& t, std::span<const int64_t> ids) {
          if (!ids.empty()) Note("release " + t + Ids(ids));
          return core::Result<size_t>(ids.size());
        }));
  }
  static std::string Ids(std::span<const int64_t> ids) {
    std::string text;
    for (int64_t id : ids) text += " " + std::to_string(id);
    return text;
  }

  std::mutex mu_;
  std::vector<std::string> events_;
};

TEST_F(OutboxWorkerAheadTest, TheNextClaimRunsBeforeTheLastWavesMarks) {
  // A wake-up left while the first claim runs: only the start of a claim made ahead takes it
  // before the round's marks (a claim takes the pending wake-up just before it starts).
  // After the round of the claim made ahead, one more claim (nothing due) before the idle wait.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Invoke([this](const relay::ClaimOptions&) {
        stop_.Wake();
        return core::Result<relay::Claim>(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")}));
      }))
      .WillOnce(Return(core::Result<relay::Claim>(relay::Claim{})));
  std::promise<void> ahead_claimed;
  EXPECT_CALL(ahead_store_, ClaimDue(_))
      .WillOnce(Invoke([this, &ahead_claimed](const relay::ClaimOptions&) {
        Note("claim ahead");
        ahead_claimed.set_value();
        return core::Result<relay::Claim>(MakeClaim(kAhead, {Row(3, "room-c")}));
      }));
  NoteMarks(kFirst);
  NoteMarks(kAhead);
  // The first claim's last mark waits for the claim ahead: a worker that claimed only after
  // its marks would never get there, and the order below would be the other way round.
  EXPECT_CALL(store_, MarkPublished(kFirst, _, _))
      .WillOnce(Invoke(
          [this](const std::string& t, std::span<const int64_t> ids, std::span<const AttemptNote>) {
            Note("mark " + t + Ids(ids));
            return core::Result<size_t>(ids.size());
          }))
      .WillOnce(Invoke([this, &ahead_claimed](const std::string& t, std::span<const int64_t> ids,
                                              std::span<const AttemptNote>) {
        if (stop_.wake_pending()) {
          ADD_FAILURE() << "no claim was started ahead before the last wave's marks";
        } else {
          // Started: its thread reaches the second store, however the threads are scheduled.
          ahead_claimed.get_future().wait();
        }
        Note("mark " + t + Ids(ids));
        return core::Result<size_t>(ids.size());
      }));
  auto worker = MakeWorker();
  worker.Run();

  EXPECT_LT(IndexOf("claim ahead"), IndexOf("mark claim-first 2"));
  EXPECT_THAT(Events(), ::testing::IsSupersetOf({"mark claim-first 1", "mark claim-first 2",
                                                 "send evt-3", "mark claim-ahead 3"}));
  // The claim made ahead was the second round's: the first store claimed for the first round
  // and once more after the second.
  EXPECT_EQ(metrics_.publish_success(), 3u);
  EXPECT_LT(IndexOf("mark claim-first 2"), IndexOf("send evt-3"))
      << "a wave's marks are committed before the next round sends";
}

TEST_F(OutboxWorkerAheadTest, AStopGivesTheClaimMadeAheadBackUnattempted) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})));
  EXPECT_CALL(ahead_store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kAhead, {Row(3, "room-c"), Row(4, "room-d")})));
  NoteMarks(kFirst);
  NoteMarks(kAhead);
  during_publish_ = [this] { stop_.RequestStop(); };
  auto worker = MakeWorker();
  worker.Run();

  EXPECT_THAT(Events(), ElementsAre("send evt-1", "mark claim-first 1", "release claim-first 2",
                                    "release claim-ahead 3 4"));
}

TEST_F(OutboxWorkerAheadTest, AShortClaimStartsNoClaimAheadAndRunRoundNeverDoes) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim(kFirst, {Row(3, "room-a")})));
  NoteMarks(kFirst);
  auto worker = MakeWorker();
  RoundResult full = worker.RunRound();  // StrictMock: a ClaimDue on the second store fails
  EXPECT_TRUE(full.claim.full);
  worker.Run();  // one short claim, then poll_interval (the stop)
  EXPECT_EQ(metrics_.publish_success(), 3u);
}

TEST_F(OutboxWorkerAheadTest, AnEmptyClaimMadeAheadIsFollowedByAClaimAtOnce) {
  // Made while the first claim's rooms were in flight, it found nothing: the next round claims
  // again on the first store instead of ending on it and waiting poll_interval.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(MakeClaim(kFirst, {Row(3, "room-a")})));
  EXPECT_CALL(ahead_store_, ClaimDue(_)).WillOnce(Return(MakeClaim(kAhead, {})));
  NoteMarks(kFirst);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_EQ(metrics_.publish_success(), 3u);
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)))
      << "one wait, after the short claim";
}

// The rooms a round sends to are leased on the room schedule until their marks, so a pacing relay
// claims ahead too: the claim made ahead takes other rooms.
TEST_F(OutboxWorkerAheadTest, APacedRelayClaimsAheadToo) {
  options_.room_min_interval = milliseconds(50);
  // After the round of the claim made ahead, one more claim (nothing due) before the idle wait.
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})))
      .WillOnce(Return(core::Result<relay::Claim>(relay::Claim{})));
  EXPECT_CALL(ahead_store_, ClaimDue(_)).WillOnce(Return(MakeClaim(kAhead, {Row(3, "room-c")})));
  NoteMarks(kFirst);
  NoteMarks(kAhead);
  auto worker = MakeWorker();
  worker.Run();
  EXPECT_EQ(metrics_.publish_success(), 3u);
  EXPECT_TRUE(Seen("send evt-3"));
}

TEST_F(OutboxWorkerAheadTest, TheLeaseOfAClaimMadeAheadCountsFromItsOwnStart) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})));
  EXPECT_CALL(ahead_store_, ClaimDue(_)).WillOnce(Return(MakeClaim(kAhead, {Row(3, "room-c")})));
  NoteMarks(kFirst);
  NoteMarks(kAhead);
  // The first round's two waves take 14 s each: the claim made ahead, started before them, has
  // 30 - 28 = 2 s of lease left, less than publish_timeout + lease_margin (4 s). Counted from
  // when the next round took it, it would have 30 s.
  during_publish_ = [this] { clock_.Advance(milliseconds(14000)); };
  auto worker = MakeWorker();
  worker.Run();

  EXPECT_FALSE(Seen("send evt-3"));
  EXPECT_TRUE(Seen("release claim-ahead 3"));
}

TEST_F(OutboxWorkerAheadTest, AnErrorOfTheClaimMadeAheadIsTheNextRoundsDatabaseError) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})));
  EXPECT_CALL(ahead_store_, ClaimDue(_))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute(claim): gone")));
  NoteMarks(kFirst);
  auto worker = MakeWorker();
  worker.Run();

  EXPECT_EQ(metrics_.publish_success(), 2u);
  // The database back-off (poll_interval at first), not a claim at once on the first store.
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
  EXPECT_FALSE(metrics_.db_up()) << "a database error of the round";
}

TEST_F(OutboxWorkerAheadTest, AMarkFailureEndsTheRoundAndTheClaimMadeAheadGoesBack) {
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim(kFirst, {Row(1, "room-a"), Row(2, "room-b")})));
  EXPECT_CALL(ahead_store_, ClaimDue(_)).WillOnce(Return(MakeClaim(kAhead, {Row(3, "room-c")})));
  EXPECT_CALL(store_, MarkPublished(kFirst, _, _))
      .WillOnce(Return(core::Fail(ErrorCode::kUnavailable, "mysql_stmt_execute(mark): gone")));
  EXPECT_CALL(store_, Release(kFirst, _))
      .Times(AnyNumber())
      .WillRepeatedly(Invoke([this](const std::string& t, std::span<const int64_t> ids) {
        if (!ids.empty()) Note("release " + t + Ids(ids));
        return core::Result<size_t>(ids.size());
      }));
  EXPECT_CALL(store_, Release(kAhead, _))
      .WillOnce(Invoke([this](const std::string& t, std::span<const int64_t> ids) {
        Note("release " + t + Ids(ids));
        return core::Result<size_t>(ids.size());
      }));
  auto worker = MakeWorker();
  worker.Run();

  EXPECT_THAT(Events(), ElementsAre("send evt-1", "release claim-first 2", "release claim-ahead 3"))
      << "nothing more is sent once a mark failed; the claim made ahead goes back";
  EXPECT_THAT(clock_.sleeps(), ElementsAre(milliseconds(1000)));
}

}  // namespace
}  // namespace room_outbox::relay
