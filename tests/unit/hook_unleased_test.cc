// The hook's rows written for the relay alone (sync publish off, or the sync breaker open): the
// store need not read their ids back (the MySQL set does not), and the commit reports them
// pending for the relay, with the reason, never as a store that broke its contract.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fake_clock.h"
#include "hook_impl.h"
#include "mock_hook_store.h"
#include "mock_publisher.h"

namespace room_outbox::testing {
namespace {

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::Return;
using ::testing::StrictMock;

// A store that wrote the rows unleased and, as the MySQL set does then, read no ids back.
void ExpectUnleasedCommitWithoutIds(StrictMock<MockHookStore>& store,
                                    internal::CommitRequest& seen) {
  EXPECT_CALL(store, CommitCommand(_, _))
      .WillOnce([&seen](const internal::CommitRequest& request, const CallerStatements&) {
        seen = request;
        return core::Result<internal::CommitWrite>(internal::CommitWrite{});
      });
}

std::unique_ptr<Hook> MakeTestHook(SyncPublishMode mode, StrictMock<MockHookStore>*& store,
                                   std::shared_ptr<core::ImBreaker> breaker) {
  auto owned_store = std::make_unique<StrictMock<MockHookStore>>();
  auto publisher = std::make_unique<StrictMock<MockPublisher>>();
  store = owned_store.get();
  EXPECT_CALL(*publisher, Sends(_)).Times(AnyNumber()).WillRepeatedly(Return(true));
  HookOptions options;
  options.node_id = "node-a";
  options.sync_publish = mode;
  // No Publish, MarkPublished or Release is expected: a StrictMock fails on any of them.
  return internal::MakeHook(options, std::move(owned_store), std::move(publisher),
                            std::make_unique<FakeClock>(1'000'000), std::move(breaker));
}

const std::vector<Event> kTwoEvents = {Event{"evt-1", "RoomGiftSent", 1, 0, "{}"},
                                       Event{"evt-2", "RoomGiftSent", 1, 0, "{}"}};
const Command kCommand{"cmd-1", "room-1", "SendGift", "req-1", 1, "{}"};

TEST(HookUnleasedTest, SyncOffLeavesTheRowsToTheRelayWithoutTheirIds) {
  StrictMock<MockHookStore>* store = nullptr;
  auto hook = MakeTestHook(SyncPublishMode::kOff, store, internal::MakeSyncBreaker());
  internal::CommitRequest seen;
  ExpectUnleasedCommitWithoutIds(*store, seen);

  const CommitResult result = hook->Commit(kCommand, kTwoEvents);

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_TRUE(seen.token.empty());
  ASSERT_EQ(result.events.size(), 2u);
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kPending) << delivery.event_id;
    EXPECT_EQ(delivery.error, "sync publish off: left for the relay") << delivery.event_id;
  }
}

TEST(HookUnleasedTest, AnOpenBreakerLeavesTheRowsToTheRelayWithoutTheirIds) {
  auto breaker = internal::MakeSyncBreaker();
  for (int i = 0; i < breaker->failures_to_open(); ++i) {
    breaker->Record(core::ImBreaker::Verdict::kFailure, false, std::chrono::milliseconds(0),
                    FakeClock().SteadyMs());  // the Hook's clock starts there too
  }
  ASSERT_TRUE(breaker->is_open());
  StrictMock<MockHookStore>* store = nullptr;
  auto hook = MakeTestHook(SyncPublishMode::kInline, store, breaker);
  internal::CommitRequest seen;
  ExpectUnleasedCommitWithoutIds(*store, seen);

  const CommitResult result = hook->Commit(kCommand, kTwoEvents);

  ASSERT_EQ(result.status, CommitStatus::kCommitted);
  EXPECT_TRUE(seen.token.empty());
  ASSERT_EQ(result.events.size(), 2u);
  for (const EventDelivery& delivery : result.events) {
    EXPECT_EQ(delivery.state, DeliveryState::kPending) << delivery.event_id;
    EXPECT_EQ(delivery.error, "sync publish skipped: IM failing, breaker open")
        << delivery.event_id;
  }
}

}  // namespace
}  // namespace room_outbox::testing
