// A room refused by Tencent IM's frequency control is backed off by the hook alone: the real
// hook (CreateHook, inline sync publish) against the test MariaDB and the fake IM enforcing a
// per-group cap (answered OK + MsgDropReason "MsgFreqCtrl", not delivered, as Tencent does). A
// burst into one room faster than the cap: after its first refusal the hook sends nothing more to
// that group until the backoff has ended, the rows stay pending for a relay (none lost, none
// marked published without delivery), and a quiet room beside it is sync-published throughout.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "room_outbox/hook.h"
#include "support/fake_im_server.h"
#include "support/test_database.h"

namespace room_outbox::testing {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// Lower than Tencent's 40 so that even a loaded machine commits faster than the cap; the stand-in
// enforces it exactly as it enforces 40.
constexpr int kGroupCap = 10;
constexpr const char* kHot = "room-hot";
constexpr const char* kQuiet = "room-quiet";

FakeImServerOptions CappedIm() {
  FakeImServerOptions options;
  options.group_cap_per_second = kGroupCap;
  options.record_bodies = false;
  return options;
}

class HookRoomRefusalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(db_.valid());
    ASSERT_TRUE(im_.running()) << im_.start_error();
  }

  std::unique_ptr<Hook> NewHook() {
    HookOptions options;
    options.mysql = db_.Options();
    options.tencent_im = im_.ClientOptions();
    options.sync_publish_timeout = milliseconds(500);
    options.node_id = "node-refusal";
    // Per-room order would hold the hot room's later commands behind the rows the refusal left
    // pending (no relay runs here to drain them), whatever the backoff says; without it the
    // backoff alone decides whether the hook sends, which is what this test looks at.
    options.per_room_order = false;
    Error error;
    auto hook = CreateHook(options, &error);
    EXPECT_TRUE(hook) << error.message;
    return hook;
  }

  // One RoomGiftSent command; returns its event's delivery.
  EventDelivery Gift(Hook& hook, const std::string& room, int n) {
    const std::string id = room + "-" + std::to_string(n);
    CommitResult result = hook.Commit(Command{"cmd-" + id, room, "SendGift", "req", n, "{}"},
                                      {Event{"evt-" + id, "RoomGiftSent", n, 0, R"({"n":1})"}});
    EXPECT_EQ(result.status, CommitStatus::kCommitted) << result.error.message;
    ++commits_[room];
    return result.events.empty() ? EventDelivery{} : result.events[0];
  }

  // The stand-in's requests to `room`'s group, in arrival order.
  std::vector<FakeImRequest> RequestsTo(const std::string& room) const {
    std::vector<FakeImRequest> out;
    for (const FakeImRequest& request : im_.Requests()) {
      if (request.room_id == room) out.push_back(request);
    }
    return out;
  }

  TestDatabase db_;
  FakeImServer im_{CappedIm()};
  std::map<std::string, int> commits_;
};

TEST_F(HookRoomRefusalTest,
       ABurstIntoOneRoomIsNotSentDuringItsBackoffAndAQuietRoomKeepsPublishing) {
  auto hook = NewHook();
  ASSERT_TRUE(hook);
  std::string refused_event;
  std::optional<SteadyClock::time_point> refused_seen;  // when the refused commit returned
  bool resumed = false;  // a hot command was sent after the backoff ended
  const auto limit = SteadyClock::now() + std::chrono::seconds(30);
  SteadyClock::time_point last_quiet{};
  int quiet_n = 0;
  for (int n = 1; !resumed && SteadyClock::now() < limit; ++n) {
    const EventDelivery hot = Gift(*hook, kHot, n);
    const bool sent = hot.error.find("sync publish skipped") == std::string::npos;
    if (refused_seen && sent && SteadyClock::now() - *refused_seen > milliseconds(1100)) {
      resumed = true;
    }
    if (!refused_seen && hot.error.find("MsgFreqCtrl") != std::string::npos) {
      refused_event = hot.event_id;
      refused_seen = SteadyClock::now();
    }
    // The quiet room at most every 200 ms: 5 messages a second, well under the cap.
    if (SteadyClock::now() - last_quiet >= milliseconds(200)) {
      last_quiet = SteadyClock::now();
      const EventDelivery quiet = Gift(*hook, kQuiet, ++quiet_n);
      EXPECT_EQ(quiet.state, DeliveryState::kPublished) << quiet.event_id << ": " << quiet.error;
    }
  }
  ASSERT_TRUE(refused_seen) << "the burst never passed the group cap";
  ASSERT_TRUE(resumed) << "the hook never sent the hot room again";

  // The stand-in's clock: the refused request's arrival. The hook's backoff starts when the answer
  // came back, later still, so nothing of the hot room may arrive within a second of it.
  const std::vector<FakeImRequest> refused = im_.RequestsFor(refused_event);
  ASSERT_EQ(refused.size(), 1u);
  ASSERT_EQ(refused[0].answer, FakeImFault::Kind::kMsgDropReason);
  const SteadyClock::time_point from = refused[0].arrived;
  const SteadyClock::time_point until = from + milliseconds(990);  // the hook's ms rounding
  size_t hot_in_backoff = 0;
  size_t hot_after = 0;
  for (const FakeImRequest& request : RequestsTo(kHot)) {
    if (request.arrived > from && request.arrived < until) ++hot_in_backoff;
    if (request.arrived >= until) ++hot_after;
  }
  EXPECT_EQ(hot_in_backoff, 0u) << "the hook sent the refused room during its backoff";
  EXPECT_GE(hot_after, 1u);
  size_t quiet_in_backoff = 0;
  for (const FakeImRequest& request : RequestsTo(kQuiet)) {
    if (request.arrived > from && request.arrived < until) ++quiet_in_backoff;
  }
  EXPECT_GE(quiet_in_backoff, 1u) << "the quiet room was held too";

  const HookMetrics m = hook->Metrics();
  EXPECT_GE(m.sync_skipped_room_refused, 1u);
  EXPECT_FALSE(m.sync_breaker_open);
  EXPECT_EQ(m.sync_skipped_room_refused + RequestsTo(kHot).size(),
            static_cast<size_t>(commits_[kHot]))
      << "every hot command was either sent once or skipped as room_refused";

  // What the database holds: every command's row; published exactly when IM delivered it.
  std::set<std::string> delivered;
  for (const FakeImRequest& request : im_.Requests()) {
    if (request.answer == FakeImFault::Kind::kOk && !request.deduped) {
      delivered.insert(request.event_id);
    }
  }
  size_t rows = 0;
  for (const TestDatabase::Row& row :
       db_.Query("SELECT event_id, status, room_id FROM room_outbox")) {
    ++rows;
    const std::string event_id = row[0].value_or("");
    const std::string status = row[1].value_or("");
    EXPECT_EQ(status == "published", delivered.count(event_id) == 1)
        << event_id << " is " << status;
    EXPECT_TRUE(status == "published" || status == "pending") << event_id << " is " << status;
  }
  EXPECT_EQ(rows, static_cast<size_t>(commits_[kHot] + commits_[kQuiet])) << "a row went missing";
  EXPECT_EQ(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_id = 'room-quiet' AND "
                       "status <> 'published'"),
            0);
  EXPECT_GE(db_.Scalar("SELECT COUNT(*) FROM room_outbox WHERE room_id = 'room-hot' AND "
                       "status = 'pending' AND retry_count = 0"),
            static_cast<int64_t>(m.sync_skipped_room_refused) + 1)
      << "the refused row and the skipped ones wait for the relay, uncharged";
}

}  // namespace
}  // namespace room_outbox::testing
