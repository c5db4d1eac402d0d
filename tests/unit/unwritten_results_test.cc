// UnwrittenResults with plain values and the store mock, and through OutboxWorker: results a
// failing store call could not write are written first, before the next claim.
#include "worker/unwritten_results.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "worker/outbox_worker.h"
#include "worker_fixture.h"

namespace room_outbox::relay {
namespace {

using ::room_outbox::testing::FailedWith;
using ::testing::_;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Return;

class UnwrittenResultsTest : public ::room_outbox::testing::WorkerFixture {};

core::Result<size_t> Gone() { return core::Fail(ErrorCode::kUnavailable, "server gone"); }

std::vector<int64_t> IdsOf(std::span<const int64_t> ids) { return {ids.begin(), ids.end()}; }

TEST_F(UnwrittenResultsTest, KeptResultsAreWrittenInTheirOrderAndForgottenOnceWritten) {
  UnwrittenResults kept;
  const std::vector<int64_t> published{1, 3};
  const std::vector<FailedAttempt> failed{FailedAttempt{4, "im error 10002", 1000}};
  const std::vector<int64_t> released{2, 5};
  kept.KeepIds(UnwrittenResults::Kind::kPublished, "t1", published);
  kept.KeepAttempts(UnwrittenResults::Kind::kFailed, "t1", failed);
  kept.KeepIds(UnwrittenResults::Kind::kReleased, "t1", released);
  EXPECT_EQ(kept.rows(), 5u);
  {
    InSequence order;
    EXPECT_CALL(store_, MarkPublished("t1", _, _))
        .WillOnce(
            [](const std::string&, std::span<const int64_t> ids, std::span<const AttemptNote>) {
              EXPECT_THAT(IdsOf(ids), ElementsAre(1, 3));
              return core::Result<size_t>(2);
            });
    EXPECT_CALL(store_, MarkFailed("t1", _))
        .WillOnce([](const std::string&, std::span<const FailedAttempt> attempts) {
          EXPECT_EQ(attempts.size(), 1u);
          EXPECT_EQ(attempts[0].error, "im error 10002");
          return core::Result<size_t>(1);
        });
    EXPECT_CALL(store_, Release("t1", _))
        .WillOnce([](const std::string&, std::span<const int64_t> ids) {
          EXPECT_THAT(IdsOf(ids), ElementsAre(2, 5));
          return core::Result<size_t>(2);
        });
  }
  ASSERT_TRUE(kept.WriteTo(store_, *logger_, "node-1"));
  EXPECT_TRUE(kept.empty());
  EXPECT_THAT(log_.str(), HasSubstr("results kept while the database was away written"));
  ASSERT_TRUE(kept.WriteTo(store_, *logger_, "node-1")) << "nothing left: no store call";
}

// A kept result keeps its history entries too, and when its outcome was known: written late,
// an entry still carries the time of the answer (the store subtracts the wait).
TEST_F(UnwrittenResultsTest, KeptResultsKeepTheirHistoryEntries) {
  UnwrittenResults kept;
  const std::vector<int64_t> published{7, 8};
  std::vector<AttemptNote> notes(2);
  notes[0].text = "node-1\t2\tpublished\thttp 200\t3";
  notes[1].text = notes[0].text;
  notes[0].known_at = notes[1].known_at = std::chrono::steady_clock::now();
  kept.KeepIds(UnwrittenResults::Kind::kPublished, "t1", published, notes);
  EXPECT_CALL(store_, MarkPublished("t1", _, _))
      .WillOnce([&](const std::string&, std::span<const int64_t> ids,
                    std::span<const AttemptNote> written) {
        EXPECT_THAT(IdsOf(ids), ElementsAre(7, 8));
        EXPECT_EQ(written.size(), 2u);
        for (const AttemptNote& n : written) {
          EXPECT_EQ(n.text, notes[0].text);
          EXPECT_EQ(n.known_at, notes[0].known_at);
        }
        return core::Result<size_t>(2);
      });
  ASSERT_TRUE(kept.WriteTo(store_, *logger_, "node-1"));
}

TEST_F(UnwrittenResultsTest, AFailingWriteKeepsItAndWhatFollowsForTheNextCall) {
  UnwrittenResults kept;
  const std::vector<int64_t> published{1};
  const std::vector<int64_t> released{2};
  kept.KeepIds(UnwrittenResults::Kind::kPublished, "t1", published);
  kept.KeepIds(UnwrittenResults::Kind::kReleased, "t1", released);
  EXPECT_CALL(store_, MarkPublished("t1", _, _)).WillOnce(Return(Gone()));
  auto first = kept.WriteTo(store_, *logger_, "node-1");
  ASSERT_FALSE(first);
  EXPECT_THAT(first.error().message, HasSubstr("server gone"));
  EXPECT_EQ(kept.rows(), 2u);
  EXPECT_CALL(store_, MarkPublished("t1", _, _)).WillOnce(Return(core::Result<size_t>(0)));
  EXPECT_CALL(store_, Release("t1", _)).WillOnce(Return(core::Result<size_t>(1)));
  ASSERT_TRUE(kept.WriteTo(store_, *logger_, "node-1"));
  EXPECT_TRUE(kept.empty());
  EXPECT_THAT(log_.str(), HasSubstr("not written again")) << "the row another claim holds now";
}

TEST_F(UnwrittenResultsTest, PastTheBoundTheOldestResultsAreDropped) {
  UnwrittenResults kept;
  const std::vector<int64_t> old_ids(kMaxUnwrittenRows, 7);
  const std::vector<int64_t> new_ids{8, 9};
  kept.KeepIds(UnwrittenResults::Kind::kReleased, "old", old_ids);
  kept.KeepIds(UnwrittenResults::Kind::kPublished, "new", new_ids);
  EXPECT_EQ(kept.rows(), 2u);
  EXPECT_EQ(kept.dropped(), kMaxUnwrittenRows);
  EXPECT_CALL(store_, MarkPublished("new", _, _)).WillOnce(Return(core::Result<size_t>(2)));
  ASSERT_TRUE(kept.WriteTo(store_, *logger_, "node-1"));
  EXPECT_THAT(log_.str(), HasSubstr("dropped=" + std::to_string(kMaxUnwrittenRows)));
}

TEST_F(UnwrittenResultsTest, AfterALostConnectionTheNextRoundMarksAndGivesBackBeforeItClaims) {
  ScriptPublisher();
  outcomes_["evt-3"].push_back(FailedWith(core::PublishStatus::kRetryable, "im error 10002"));
  std::vector<std::string> calls;
  auto record = [&](const std::string& what, std::span<const int64_t> ids) {
    std::string entry = what;
    for (int64_t id : ids) entry += " " + std::to_string(id);
    calls.push_back(entry);
  };
  EXPECT_CALL(store_, ClaimDue(_))
      .WillOnce(Return(MakeClaim({Row(1, "room-a"), Row(2, "room-a"), Row(3, "room-b")})))
      .WillOnce([&](const ClaimOptions&) {
        calls.push_back("claim");
        return core::Result<Claim>(MakeClaim("claim-2", {}));
      });
  // The database goes away after the first wave's answers: nothing of the round is written.
  bool gone = true;
  EXPECT_CALL(store_, MarkPublished(kToken, _, _))
      .WillRepeatedly(
          [&](const std::string&, std::span<const int64_t> ids, std::span<const AttemptNote>) {
            record("published", ids);
            return gone ? Gone() : core::Result<size_t>(ids.size());
          });
  EXPECT_CALL(store_, MarkFailed(kToken, _))
      .WillRepeatedly([&](const std::string&, std::span<const FailedAttempt> attempts) {
        calls.push_back("failed " + std::to_string(attempts.front().id));
        return gone ? Gone() : core::Result<size_t>(attempts.size());
      });
  EXPECT_CALL(store_, Release(kToken, _))
      .WillRepeatedly([&](const std::string&, std::span<const int64_t> ids) {
        record("released", ids);
        return gone ? Gone() : core::Result<size_t>(ids.size());
      });
  auto worker = MakeWorker();
  const RoundResult lost = worker.RunRound();
  ASSERT_TRUE(lost.store_error);
  EXPECT_EQ(metrics_.results_unwritten(), 3) << "1 published, 3 failed, 2 never sent";
  calls.clear();
  gone = false;
  worker.RunRound();
  EXPECT_THAT(calls, ElementsAre("published 1", "failed 3", "released 2", "claim"))
      << "IM's answers are written and the unsent row given back before anything is claimed";
  EXPECT_EQ(metrics_.results_unwritten(), 0);
}

TEST_F(UnwrittenResultsTest, WhileTheDatabaseIsStillAwayNothingIsClaimed) {
  ScriptPublisher();
  EXPECT_CALL(store_, ClaimDue(_)).WillOnce(Return(MakeClaim({Row(1, "room-a")})));
  EXPECT_CALL(store_, MarkPublished(kToken, _, _)).Times(2).WillRepeatedly(Return(Gone()));
  auto worker = MakeWorker();
  ASSERT_TRUE(worker.RunRound().store_error);
  const RoundResult still = worker.RunRound();  // StrictMock: a second ClaimDue would fail
  EXPECT_TRUE(still.store_error);
  ASSERT_TRUE(still.error);
  EXPECT_THAT(still.error->message, HasSubstr("results kept since the database went away"));
  EXPECT_EQ(metrics_.results_unwritten(), 1);
}

}  // namespace
}  // namespace room_outbox::relay
