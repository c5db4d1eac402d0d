// TencentImPublisher against a FakeImServer that models Tencent: failure scopes, the
// app-scope circuit breaker, MsgPriority, Random across resends, the process-wide budget, and the
// fake's own per-group cap, dedupe window, per-group faults and 70050 lock-out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/tencent/im_request.h"
#include "core/tencent/process_rate_budget.h"
#include "core/tencent/tencent_im_publisher.h"
#include "fake_clock.h"
#include "support/fake_im_server.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::FakeImFault;
using testing::FakeImServer;
using testing::FakeImServerOptions;

constexpr milliseconds kTimeout{3000};

FakeImServerOptions ServerOptions() {
  FakeImServerOptions o;
  o.group_id_prefix = "live_";
  return o;
}

core::PublishMessage Msg(int64_t row_id, const std::string& room = "r1",
                         const std::string& type = "RoomGiftSent", uint32_t generation = 0) {
  core::PublishMessage m;
  m.row_id = row_id;
  m.drop_generation = generation;
  Envelope& e = m.envelope;
  e.event_id = "evt-" + std::to_string(row_id);
  e.event_type = type;
  e.room_id = room;
  e.room_seq = row_id;
  e.command_id = "cmd-" + std::to_string(row_id);
  e.request_id = "req-" + std::to_string(row_id);
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000000;
  e.payload = R"({"gift":"rose"})";
  return m;
}

class TencentImScopesTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.running()) << server_.start_error(); }

  std::unique_ptr<core::Publisher> Make(const TencentImOptions& options) {
    auto publisher = core::MakeTencentImPublisher(options, clock_);
    EXPECT_TRUE(publisher) << publisher.error().message;
    return publisher ? std::move(*publisher) : nullptr;
  }
  std::unique_ptr<core::Publisher> Make() { return Make(server_.ClientOptions()); }

  // The publishers' clock, moved by hand over the breaker's cooldowns; it outlives them. Its wall
  // time starts at the real one: the fake IM server checks the UserSig's validity against that.
  testing::FakeClock clock_{core::SystemClock().NowMs()};
  FakeImServer server_{ServerOptions()};
};

TEST_F(TencentImScopesTest, MsgPriorityIsInEveryBodyAsConfigured) {
  TencentImOptions options = server_.ClientOptions();
  options.msg_priority = MsgPriority::kNormal;
  options.priority_by_type["RoomGiftSent"] = MsgPriority::kHigh;
  options.priority_by_type["RoomLikeSent"] = MsgPriority::kLow;
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  std::vector<core::PublishMessage> batch = {
      Msg(1, "r1", "RoomGiftSent"), Msg(2, "r2", "RoomLikeSent"), Msg(3, "r3", "RoomUserJoined"),
      Msg(4, "r4", "RoomLikeSent")};
  batch[3].priority = MsgPriority::kHigh;  // the message's own override wins
  auto outcomes = publisher->PublishMany(batch, kTimeout, 4);
  for (const auto& out : outcomes) {
    EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
    EXPECT_EQ(out.scope, core::FailureScope::kNone);
  }
  std::map<std::string, std::string> priority_of;
  for (const auto& r : server_.Requests()) {
    priority_of[r.event_id] = r.priority;
    auto body = nlohmann::json::parse(r.body);
    EXPECT_TRUE(body.contains("MsgPriority")) << r.body;
  }
  EXPECT_EQ(priority_of["evt-1"], "High");
  EXPECT_EQ(priority_of["evt-2"], "Low");
  EXPECT_EQ(priority_of["evt-3"], "Normal") << "msg_priority for types not in the table";
  EXPECT_EQ(priority_of["evt-4"], "High");
}

TEST_F(TencentImScopesTest, AResendAfterAnUnknownOutcomeIsByteIdentical) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  server_.PushFault(FakeImFault::DropConnection());
  core::PublishMessage message = Msg(500);
  core::PublishOutcome first = publisher->Publish(message, kTimeout);
  ASSERT_EQ(first.status, core::PublishStatus::kUnknown) << first.error;
  EXPECT_EQ(first.scope, core::FailureScope::kRow);
  EXPECT_FALSE(first.definite_drop) << "IM may have it: keep the generation";
  core::PublishOutcome second = publisher->Publish(message, kTimeout);
  ASSERT_EQ(second.status, core::PublishStatus::kPublished) << second.error;
  auto requests = server_.RequestsFor("evt-500");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, requests[1].body);
  EXPECT_EQ(requests[1].random, core::RandomForRow(500, 0));
}

TEST_F(TencentImScopesTest, AResendAfterMsgDropReasonCarriesANewRandom) {
  FakeImServerOptions o = ServerOptions();
  o.dedupe_window = std::chrono::minutes(5);
  o.dropped_holds_dedupe_key = true;  // the pessimistic reading of Tencent's docs
  FakeImServer im(o);
  ASSERT_TRUE(im.running());
  auto publisher = Make(im.ClientOptions());
  ASSERT_TRUE(publisher);
  im.PushFaultForGroup("live_hot", FakeImFault::FreqCtrl());
  core::PublishMessage message = Msg(600, "hot");
  core::PublishOutcome dropped = publisher->Publish(message, kTimeout);
  EXPECT_EQ(dropped.status, core::PublishStatus::kRateLimited) << dropped.error;
  EXPECT_EQ(dropped.scope, core::FailureScope::kRoom);
  EXPECT_TRUE(dropped.definite_drop);
  // What the old formula did: the same Random again, swallowed as a duplicate of the dropped
  // message while IM answers OK.
  core::PublishOutcome same = publisher->Publish(message, kTimeout);
  EXPECT_EQ(same.status, core::PublishStatus::kPublished);
  EXPECT_EQ(im.Stats().deduped, 1u);
  EXPECT_EQ(im.Stats().delivered, 0u) << "IM swallowed it";
  // The next generation: a new Random, delivered.
  message.drop_generation = 1;
  core::PublishOutcome resent = publisher->Publish(message, kTimeout);
  EXPECT_EQ(resent.status, core::PublishStatus::kPublished) << resent.error;
  EXPECT_EQ(im.Stats().delivered, 1u);
  auto requests = im.RequestsFor("evt-600");
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].random, core::RandomForRow(600, 0));
  EXPECT_EQ(requests[2].random, core::RandomForRow(600, 1));
  EXPECT_NE(requests[0].random, requests[2].random);
  EXPECT_FALSE(requests[2].deduped);
}

TEST_F(TencentImScopesTest, WhileTheBreakerIsOpenNoRequestReachesIm) {
  TencentImOptions options = server_.ClientOptions();
  options.breaker_cooldown = milliseconds(500);
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  server_.SetDefaultFault(FakeImFault::ImError(70003, "invalid usersig"));

  core::PublishOutcome tripping = publisher->Publish(Msg(1), kTimeout);
  EXPECT_EQ(tripping.status, core::PublishStatus::kPermanent);
  EXPECT_EQ(tripping.scope, core::FailureScope::kApp);
  EXPECT_EQ(tripping.breaker, core::BreakerTransition::kOpened);
  EXPECT_TRUE(publisher->breaker_open());
  ASSERT_EQ(server_.Stats().requests, 1u);

  std::vector<core::PublishMessage> batch;
  for (int i = 0; i < 10; ++i) {
    batch.push_back(Msg(10 + i, "room-" + std::to_string(i)));
  }
  auto start = std::chrono::steady_clock::now();
  auto outcomes = publisher->PublishMany(batch, kTimeout, 8);
  core::PublishOutcome single = publisher->Publish(Msg(30), kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(200)) << "answered at once";
  outcomes.push_back(single);
  for (const auto& out : outcomes) {
    EXPECT_EQ(out.status, core::PublishStatus::kNotAttempted) << out.error;
    EXPECT_EQ(out.scope, core::FailureScope::kApp);
    EXPECT_FALSE(out.attempted());
    EXPECT_FALSE(out.delivered());
    EXPECT_EQ(out.breaker, core::BreakerTransition::kNone) << "opened once";
    EXPECT_NE(out.error.find("breaker open"), std::string::npos) << out.error;
  }
  EXPECT_EQ(server_.Stats().requests, 1u) << "nothing sent while open";

  // IM recovers; after the cooldown the first message is the probe, the rest wait for it.
  server_.SetDefaultFault(FakeImFault::Ok());
  clock_.Advance(milliseconds(499));
  EXPECT_EQ(publisher->Publish(Msg(31), kTimeout).status, core::PublishStatus::kNotAttempted);
  clock_.Advance(milliseconds(1));
  outcomes = publisher->PublishMany(batch, kTimeout, 8);
  ASSERT_EQ(outcomes.size(), batch.size());
  EXPECT_EQ(outcomes[0].breaker, core::BreakerTransition::kClosed);
  for (const auto& out : outcomes) {
    EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  }
  EXPECT_FALSE(publisher->breaker_open());
  EXPECT_EQ(server_.Stats().requests, 11u);
}

TEST_F(TencentImScopesTest, ABreakerOpenedMidCallHoldsBackTheRestOfTheCall) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  server_.PushFault(FakeImFault::ImError(60006, "app invalid"));
  std::vector<core::PublishMessage> batch = {Msg(1, "a"), Msg(2, "b"), Msg(3, "c")};
  auto outcomes = publisher->PublishMany(batch, kTimeout, 1);  // one at a time
  EXPECT_EQ(outcomes[0].scope, core::FailureScope::kApp);
  EXPECT_EQ(outcomes[0].breaker, core::BreakerTransition::kOpened);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kNotAttempted);
  EXPECT_EQ(outcomes[2].status, core::PublishStatus::kNotAttempted);
  EXPECT_EQ(server_.Stats().requests, 1u);
}

TEST_F(TencentImScopesTest, AFailedProbeReopensTheBreakerAndSendsOnlyItself) {
  TencentImOptions options = server_.ClientOptions();
  options.breaker_cooldown = milliseconds(500);
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  server_.SetDefaultFault(FakeImFault::ImError(60020, "package expired"));
  ASSERT_EQ(publisher->Publish(Msg(1), kTimeout).breaker, core::BreakerTransition::kOpened);
  clock_.Advance(milliseconds(500));
  std::vector<core::PublishMessage> batch = {Msg(2, "a"), Msg(3, "b"), Msg(4, "c")};
  auto outcomes = publisher->PublishMany(batch, kTimeout, 8);
  EXPECT_EQ(outcomes[0].status, core::PublishStatus::kPermanent);
  EXPECT_EQ(outcomes[0].breaker, core::BreakerTransition::kReopened);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kNotAttempted);
  EXPECT_EQ(outcomes[2].status, core::PublishStatus::kNotAttempted);
  EXPECT_EQ(server_.Stats().requests, 2u) << "the tripping request and one probe";
  EXPECT_TRUE(publisher->breaker_open());
}

TEST_F(TencentImScopesTest, A70050LockOutKeepsTheBreakerOpenAtLeastAMinute) {
  FakeImServerOptions o = ServerOptions();
  o.usersig_check_limit = 2;  // the third check within the window locks out
  o.usersig_lockout = milliseconds(0);  // the fake answers 70050 once, then lets requests in
  FakeImServer im(o);
  ASSERT_TRUE(im.running());
  TencentImOptions options = im.ClientOptions();
  options.breaker_cooldown = seconds(1);
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  EXPECT_EQ(publisher->Publish(Msg(1), kTimeout).status, core::PublishStatus::kPublished);
  EXPECT_EQ(publisher->Publish(Msg(2), kTimeout).status, core::PublishStatus::kPublished);
  core::PublishOutcome locked = publisher->Publish(Msg(3), kTimeout);
  EXPECT_EQ(locked.im_error_code, 70050) << locked.error;
  EXPECT_EQ(locked.scope, core::FailureScope::kApp);
  EXPECT_EQ(locked.min_cooldown, seconds(60));
  EXPECT_EQ(locked.breaker, core::BreakerTransition::kOpened);
  EXPECT_EQ(im.Stats().locked_out, 1u);

  clock_.Advance(seconds(2));  // past breaker_cooldown, not past the minute
  EXPECT_EQ(publisher->Publish(Msg(4), kTimeout).status, core::PublishStatus::kNotAttempted);
  clock_.Advance(seconds(58));
  core::PublishOutcome probe = publisher->Publish(Msg(5), kTimeout);
  EXPECT_EQ(probe.status, core::PublishStatus::kPublished) << probe.error;
  EXPECT_EQ(probe.breaker, core::BreakerTransition::kClosed) << probe.error;
  EXPECT_EQ(im.Stats().requests, 4u);
}

// The stand-in's app-wide limit, which the shared budget's tests and benchmark 11 measure
// against: calls over it within a second are answered 60007 and not delivered.
TEST_F(TencentImScopesTest, TheAppLimitAnswers60007BeyondItsCallsPerSecond) {
  FakeImServerOptions o = ServerOptions();
  o.app_limit_per_second = 3;
  FakeImServer im(o);
  ASSERT_TRUE(im.running());
  auto publisher = Make(im.ClientOptions());
  ASSERT_TRUE(publisher);
  for (int64_t row = 1; row <= 3; ++row) {
    EXPECT_EQ(publisher->Publish(Msg(row), kTimeout).status, core::PublishStatus::kPublished)
        << row;
  }
  core::PublishOutcome refused = publisher->Publish(Msg(4), kTimeout);
  EXPECT_EQ(refused.status, core::PublishStatus::kRateLimited) << refused.error;
  EXPECT_EQ(refused.im_error_code, 60007);
  EXPECT_EQ(refused.scope, core::FailureScope::kGlobalRate);
  EXPECT_EQ(im.Stats().app_limited, 1u);
  EXPECT_EQ(im.Stats().delivered, 3u);
}

TEST_F(TencentImScopesTest, OnlyGlobalRateLimitsSlowTheProcessBudget) {
  TencentImOptions options = server_.ClientOptions();
  options.requests_per_second = 40;
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  auto budget = core::ProcessRateBudget(options.endpoint, options.sdk_app_id, 40);
  server_.PushFault(FakeImFault::FreqCtrl());
  server_.PushFault(FakeImFault::ImError(10023, "group send frequency"));
  EXPECT_EQ(publisher->Publish(Msg(1), kTimeout).scope, core::FailureScope::kRoom);
  EXPECT_EQ(publisher->Publish(Msg(2), kTimeout).scope, core::FailureScope::kRoom);
  EXPECT_EQ(budget->effective_rate(), 40) << "a group over its cap says nothing about the app";
  server_.PushFault(FakeImFault::ImError(60007, "REST rate"));
  core::PublishOutcome limited = publisher->Publish(Msg(3), kTimeout);
  EXPECT_EQ(limited.scope, core::FailureScope::kGlobalRate);
  EXPECT_EQ(budget->effective_rate(), 20);
  EXPECT_FALSE(publisher->breaker_open()) << "rate limits are not app failures";
}

TEST_F(TencentImScopesTest, PublishersOfOneProcessShareOneBudget) {
  TencentImOptions options = server_.ClientOptions();
  options.requests_per_second = 1;  // a burst of one token
  auto first = Make(options);
  auto second = Make(options);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->Publish(Msg(1), milliseconds(300)).status, core::PublishStatus::kPublished);
  core::PublishOutcome out = second->Publish(Msg(2), milliseconds(300));
  EXPECT_EQ(out.status, core::PublishStatus::kRateLimited) << "the first publisher took the token";
  EXPECT_EQ(out.scope, core::FailureScope::kGlobalRate);
  EXPECT_EQ(server_.Stats().requests, 1u);
}

TEST_F(TencentImScopesTest, PerGroupFaultsConcernOnlyTheirGroup) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  server_.SetGroupFault("live_gone", FakeImFault::ImError(10010, "group dissolved"));
  server_.PushFaultForGroup("live_busy", FakeImFault::HttpStatus(502));
  std::vector<core::PublishMessage> batch = {Msg(1, "gone"), Msg(2, "busy"), Msg(3, "fine")};
  auto outcomes = publisher->PublishMany(batch, kTimeout, 3);
  EXPECT_EQ(outcomes[0].status, core::PublishStatus::kPermanent);
  EXPECT_EQ(outcomes[0].scope, core::FailureScope::kUndeliverableRow);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kRetryable);
  EXPECT_EQ(outcomes[1].scope, core::FailureScope::kRow);
  EXPECT_EQ(outcomes[2].status, core::PublishStatus::kPublished);
  // The queued fault was used up, the standing one stays.
  outcomes = publisher->PublishMany(batch, kTimeout, 3);
  EXPECT_EQ(outcomes[0].status, core::PublishStatus::kPermanent);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kPublished);
  EXPECT_FALSE(publisher->breaker_open()) << "row failures never open the breaker";
  server_.SetGroupFault("live_gone", std::nullopt);
  EXPECT_EQ(publisher->Publish(Msg(1, "gone"), kTimeout).status, core::PublishStatus::kPublished);
}

TEST_F(TencentImScopesTest, TheGroupCapDropsLowerPrioritiesFirst) {
  FakeImServerOptions o = ServerOptions();
  o.group_cap_per_second = 10;
  FakeImServer im(o);
  ASSERT_TRUE(im.running());
  im.SetGroupChatRate("live_hot", 6);  // audience chat at Normal priority
  auto publisher = Make(im.ClientOptions());
  ASSERT_TRUE(publisher);
  auto send = [&](int64_t row, MsgPriority priority, const std::string& room = "hot") {
    core::PublishMessage m = Msg(row, room);
    m.priority = priority;
    return publisher->Publish(m, kTimeout);
  };
  // Normal competes with the chat: 6 + 4 reach the cap of 10.
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(send(100 + i, MsgPriority::kNormal).status, core::PublishStatus::kPublished) << i;
  }
  core::PublishOutcome capped = send(104, MsgPriority::kNormal);
  EXPECT_EQ(capped.status, core::PublishStatus::kRateLimited);
  EXPECT_EQ(capped.scope, core::FailureScope::kRoom);
  EXPECT_TRUE(capped.definite_drop);
  // High competes only with High: it still goes through; Low competes with everything.
  EXPECT_EQ(send(105, MsgPriority::kHigh).status, core::PublishStatus::kPublished);
  EXPECT_EQ(send(106, MsgPriority::kLow).status, core::PublishStatus::kRateLimited);
  // Another group is not affected.
  EXPECT_EQ(send(107, MsgPriority::kLow, "quiet").status, core::PublishStatus::kPublished);
  auto stats = im.Stats();
  EXPECT_EQ(stats.delivered, 6u);
  EXPECT_EQ(stats.freq_dropped, 2u);
}

}  // namespace
}  // namespace room_outbox
