// TencentImPublisher against FakeImServer on 127.0.0.1: real HTTP, real libcurl.
#include "core/tencent/tencent_im_publisher.h"

#include <curl/curl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/tencent/im_request.h"
#include "support/config_fixture.h"
#include "support/fake_im_server.h"

namespace room_outbox {
namespace {

using std::chrono::milliseconds;
using testing::FakeImFault;
using testing::FakeImServer;
using testing::FakeImServerOptions;
using SteadyClock = std::chrono::steady_clock;

// A clock whose wall time is a second later at each read (the UserSig's time, starting at the
// real one: the fake IM server checks the sig's validity against that) and whose monotonic time
// stands still.
class TickingWallClock final : public core::Clock {
 public:
  explicit TickingWallClock(int64_t start_s) : next_s_(start_s) {}
  int64_t NowMs() override { return 1000 * next_s_++; }
  int64_t SteadyMs() override { return 5'000'000; }

 private:
  std::atomic<int64_t> next_s_;
};

constexpr milliseconds kTimeout{3000};

FakeImServerOptions ServerOptions() {
  FakeImServerOptions o;
  o.group_id_prefix = "live_";
  return o;
}

Envelope Event(const std::string& id, const std::string& type = "RoomGiftSent",
               const std::string& room = "r1") {
  Envelope e;
  e.event_id = id;
  e.event_type = type;
  e.room_id = room;
  e.room_seq = 3;
  e.command_id = "cmd-" + id;
  e.request_id = "req-" + id;
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000000;
  e.payload = R"({"gift":"rose","count":1})";
  return e;
}

// A message for `envelope`; without a row id, each call takes the next one, so distinct calls
// are distinct rows.
core::PublishMessage Msg(const Envelope& envelope, int64_t row_id = 0, uint32_t generation = 0) {
  static std::atomic<int64_t> next_row_id{1000};
  core::PublishMessage m;
  m.row_id = row_id != 0 ? row_id : next_row_id++;
  m.drop_generation = generation;
  m.envelope = envelope;
  return m;
}

milliseconds Since(SteadyClock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(SteadyClock::now() - start);
}

class TencentImPublisherTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(server_.running()) << server_.start_error(); }

  std::unique_ptr<core::Publisher> Make(const TencentImOptions& options) {
    auto publisher = core::MakeTencentImPublisher(options);
    EXPECT_TRUE(publisher) << publisher.error().message;
    return publisher ? std::move(*publisher) : nullptr;
  }
  std::unique_ptr<core::Publisher> Make() { return Make(server_.ClientOptions()); }

  // An error text must be short and free of the secret key, the usersig and the body.
  void ExpectSafeError(const core::PublishOutcome& outcome, const std::string& secret,
                       const std::string& context) {
    EXPECT_LT(outcome.error.size(), 200u) << context << ": " << outcome.error;
    EXPECT_EQ(outcome.error.find(secret), std::string::npos) << context;
    EXPECT_EQ(outcome.error.find("usersig="), std::string::npos) << context;
    EXPECT_EQ(outcome.error.find("eJ"), std::string::npos) << context << ": looks like a sig";
    EXPECT_EQ(outcome.error.find("MsgBody"), std::string::npos) << context;
    EXPECT_EQ(outcome.error.find("<html>"), std::string::npos) << context;
  }

  FakeImServer server_{ServerOptions()};
};

TEST_F(TencentImPublisherTest, PublishesAndServerSeesDocumentedRequest) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  Envelope event = Event("evt-ok");
  core::PublishOutcome out = publisher->Publish(Msg(event, 41), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  EXPECT_TRUE(out.delivered());
  EXPECT_EQ(out.http_status, 200);
  EXPECT_EQ(out.im_error_code, 0);
  EXPECT_TRUE(out.error.empty()) << out.error;
  EXPECT_LT(out.latency, kTimeout);

  auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const auto& r = requests[0];
  EXPECT_EQ(r.event_id, "evt-ok");
  EXPECT_EQ(r.event_type, "RoomGiftSent");
  EXPECT_EQ(r.room_id, "r1");
  EXPECT_EQ(r.room_seq, 3);
  EXPECT_EQ(r.group_id, "live_r1");
  EXPECT_EQ(r.random, core::RandomForRow(41, 0));
  EXPECT_EQ(r.priority, "High") << "the default msg_priority";
  auto body =
      core::BuildSendGroupMsgBody(event, "live_", core::RandomForRow(41, 0), MsgPriority::kHigh);
  ASSERT_TRUE(body);
  EXPECT_EQ(r.body, *body);
  int64_t now_s = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  EXPECT_NEAR(static_cast<double>(r.usersig_time), static_cast<double>(now_s), 60.0);
  auto stats = server_.Stats();
  EXPECT_EQ(stats.delivered, 1u);
  EXPECT_EQ(stats.rejected, 0u);
}

TEST_F(TencentImPublisherTest, WrongSecretKeyIsRejectedAsPermanent) {
  TencentImOptions options = server_.ClientOptions();
  options.secret_key = "not-the-right-key-4f1d";
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-key")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPermanent) << out.error;
  EXPECT_EQ(out.im_error_code, 70009) << out.error;
  ExpectSafeError(out, options.secret_key, "wrong key");
  ExpectSafeError(out, server_.options().secret_key, "wrong key");
  EXPECT_EQ(server_.Stats().rejected, 1u);
  EXPECT_EQ(server_.Stats().delivered, 0u);
  ASSERT_EQ(server_.Rejections().size(), 1u);
  EXPECT_EQ(server_.Rejections()[0], "usersig hmac mismatch");
}

TEST_F(TencentImPublisherTest, WrongIdentifierOrAppIsRejected) {
  TencentImOptions options = server_.ClientOptions();
  options.admin_identifier = "not admin";
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-id")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPermanent);
  EXPECT_EQ(out.im_error_code, 60004);

  options = server_.ClientOptions();
  options.sdk_app_id = 1400000001;
  publisher = Make(options);
  ASSERT_TRUE(publisher);
  out = publisher->Publish(Msg(Event("evt-app")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPermanent);
  EXPECT_EQ(out.im_error_code, 70020);
  EXPECT_EQ(server_.Stats().rejected, 2u);
}

TEST_F(TencentImPublisherTest, EachFaultGivesItsOutcome) {
  struct Case {
    const char* name;
    FakeImFault fault;
    core::PublishStatus status;
    int http_status;
    int im_error_code;
    const char* error_part;
    core::FailureScope scope;
  };
  const Case cases[] = {
      {"im 10002", FakeImFault::ImError(10002, "internal error"), core::PublishStatus::kRetryable,
       200, 10002, "im error 10002: internal error", core::FailureScope::kRow},
      {"im 10010", FakeImFault::ImError(10010, "group not found"), core::PublishStatus::kPermanent,
       200, 10010, "im error 10010: group not found", core::FailureScope::kUndeliverableRow},
      {"im 60007", FakeImFault::ImError(60007, "rest rate"), core::PublishStatus::kRateLimited, 200,
       60007, "im error 60007", core::FailureScope::kGlobalRate},
      {"http 502", FakeImFault::HttpStatus(502), core::PublishStatus::kRetryable, 502, 0,
       "http 502 from IM", core::FailureScope::kRow},
      {"not json", FakeImFault::NotJson(), core::PublishStatus::kRetryable, 200, 0,
       "invalid IM response (not JSON)", core::FailureScope::kRow},
      {"freq ctrl", FakeImFault::FreqCtrl(), core::PublishStatus::kRateLimited, 200, 0,
       "dropped by IM: MsgFreqCtrl", core::FailureScope::kRoom},
      {"dropped connection", FakeImFault::DropConnection(), core::PublishStatus::kUnknown, 0, 0,
       "curl_easy_perform(POST 127.0.0.1:", core::FailureScope::kRow},
      {"oversized body", FakeImFault::OversizedBody(), core::PublishStatus::kUnknown, 200, 0,
       "IM response larger than 65536 bytes", core::FailureScope::kRow},
  };
  for (const auto& c : cases) {
    server_.Reset();
    server_.SetDefaultFault(c.fault);
    // A fresh publisher: its first request opens a fresh connection, so libcurl's own resend
    // on a stale reused connection cannot muddy the count.
    auto publisher = Make();
    ASSERT_TRUE(publisher);
    core::PublishOutcome out =
        publisher->Publish(Msg(Event(std::string("evt-") + c.name)), kTimeout);
    EXPECT_EQ(out.status, c.status)
        << c.name << ": " << core::PublishStatusName(out.status) << " " << out.error;
    EXPECT_FALSE(out.delivered()) << c.name;
    EXPECT_EQ(out.http_status, c.http_status) << c.name;
    EXPECT_EQ(out.im_error_code, c.im_error_code) << c.name;
    EXPECT_EQ(out.scope, c.scope) << c.name << ": " << core::FailureScopeName(out.scope);
    EXPECT_NE(out.error.find(c.error_part), std::string::npos) << c.name << ": " << out.error;
    ExpectSafeError(out, server_.options().secret_key, c.name);
    EXPECT_EQ(server_.Requests().size(), 1u) << c.name << ": no hidden retries";
    EXPECT_EQ(server_.Stats().delivered, 0u) << c.name;
  }
}

TEST_F(TencentImPublisherTest, DroppedConnectionIsACurlErrorAfterSending) {
  server_.SetDefaultFault(FakeImFault::DropConnection());
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-drop")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kUnknown) << out.error;
  // CURLE_GOT_NOTHING: the server read the request and closed without a byte.
  EXPECT_NE(out.error.find("[52]"), std::string::npos) << out.error;
  EXPECT_LT(out.latency, milliseconds(2000));
}

TEST_F(TencentImPublisherTest, DelayPastTimeoutIsUnknownAndReturnsInTime) {
  server_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(3000)));
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  const milliseconds timeout{300};
  auto start = SteadyClock::now();
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-slow")), timeout);
  milliseconds elapsed = Since(start);
  EXPECT_EQ(out.status, core::PublishStatus::kUnknown) << out.error;
  EXPECT_EQ(out.error, "timeout after 300ms");
  EXPECT_GE(elapsed, milliseconds(250));
  EXPECT_LT(elapsed, timeout + milliseconds(700)) << "returns within the timeout";
  EXPECT_EQ(server_.Requests().size(), 1u);
}

TEST_F(TencentImPublisherTest, ExpiredUserSigIsRenewedAndRetriedOnce) {
  server_.PushFault(FakeImFault::ImError(70001, "usersig expired"));
  // Each wall-clock read is a second later, so the renewed sig carries a later TLS.time.
  TickingWallClock clock(core::SystemClock().NowMs() / 1000);
  auto made = core::MakeTencentImPublisher(server_.ClientOptions(), clock);
  ASSERT_TRUE(made) << made.error().message;
  core::PublishOutcome out = (*made)->Publish(Msg(Event("evt-sig")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;

  auto requests = server_.RequestsFor("evt-sig");
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, requests[1].body) << "same body on the retry";
  EXPECT_EQ(requests[0].random, requests[1].random);
  EXPECT_GT(requests[1].usersig_time, requests[0].usersig_time) << "a new sig was made";
}

TEST_F(TencentImPublisherTest, ExpiredUserSigTwiceIsRetryableAfterOneRetry) {
  server_.SetDefaultFault(FakeImFault::ImError(70001, "usersig expired"));
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-sig2")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kRetryable);
  EXPECT_EQ(out.im_error_code, 70001);
  EXPECT_EQ(server_.RequestsFor("evt-sig2").size(), 2u);
}

TEST_F(TencentImPublisherTest, RetriedEventBodyIsByteIdentical) {
  server_.SetDefaultFault(FakeImFault::ImError(10002, "internal error"));
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  core::PublishMessage event = Msg(Event("evt-retry"), 77);
  EXPECT_EQ(publisher->Publish(event, kTimeout).status, core::PublishStatus::kRetryable);
  EXPECT_EQ(publisher->Publish(event, kTimeout).status, core::PublishStatus::kRetryable);
  server_.SetDefaultFault(FakeImFault::Ok());
  EXPECT_EQ(publisher->Publish(event, kTimeout).status, core::PublishStatus::kPublished);
  auto requests = server_.RequestsFor("evt-retry");
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.body, requests[0].body);
    EXPECT_EQ(r.random, core::RandomForRow(77, 0));
  }
}

TEST_F(TencentImPublisherTest, SequentialPublishesReuseOneConnection) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  for (int i = 0; i < 10; ++i) {
    auto out = publisher->Publish(Msg(Event("evt-seq-" + std::to_string(i))), kTimeout);
    ASSERT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  }
  std::vector<core::PublishMessage> batch = {Msg(Event("evt-seq-a")), Msg(Event("evt-seq-b"))};
  auto outcomes = publisher->PublishMany(batch, kTimeout, 1);
  EXPECT_EQ(outcomes[0].status, core::PublishStatus::kPublished);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kPublished);
  EXPECT_EQ(server_.Stats().connections, 1u) << "keep-alive across Publish and PublishMany";
}

TEST_F(TencentImPublisherTest, PublishManyOverlapsUpToMaxInFlight) {
  server_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(100)));
  server_.PushFaultForEvent("evt-many-5", FakeImFault::ImError(10010, "group not found"));
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  std::vector<core::PublishMessage> batch;
  for (int i = 0; i < 16; ++i) {
    batch.push_back(
        Msg(Event("evt-many-" + std::to_string(i), "RoomGiftSent", "room-" + std::to_string(i))));
  }
  auto start = SteadyClock::now();
  auto outcomes = publisher->PublishMany(batch, kTimeout, 8);
  milliseconds elapsed = Since(start);
  ASSERT_EQ(outcomes.size(), 16u);
  for (size_t i = 0; i < outcomes.size(); ++i) {
    core::PublishStatus expected =
        i == 5 ? core::PublishStatus::kPermanent : core::PublishStatus::kPublished;
    EXPECT_EQ(outcomes[i].status, expected) << i << ": " << outcomes[i].error;
  }
  EXPECT_EQ(outcomes[5].im_error_code, 10010) << "outcomes come back in input order";
  auto stats = server_.Stats();
  EXPECT_GT(stats.max_concurrent, 1u);
  EXPECT_LE(stats.max_concurrent, 8u);
  EXPECT_LE(stats.connections, 8u);
  // Two rounds of 100ms; a serial run would need 1.6s.
  EXPECT_LT(elapsed, milliseconds(1500));

  // A second batch reuses the pooled connections.
  auto again = publisher->PublishMany(batch, kTimeout, 8);
  for (const auto& out : again) {
    EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  }
  EXPECT_LE(server_.Stats().connections, 8u);
  EXPECT_LE(server_.Stats().max_concurrent, 8u);
}

// A MessageFeed of per-room chains, as the relay's RoomSender keeps them: a room's next message
// only once the one before it is Done. Records the order of the outcomes.
class ChainFeed final : public core::MessageFeed {
 public:
  explicit ChainFeed(std::map<std::string, std::vector<core::PublishMessage>> rooms)
      : rooms_(std::move(rooms)) {}

  std::optional<core::FeedMessage> Next() override {
    for (auto& [room, messages] : rooms_) {
      if (in_flight_.count(room) != 0 || next_[room] >= messages.size()) continue;
      in_flight_.insert(room);
      tags_.push_back(room);
      return core::FeedMessage{&messages[next_[room]++], tags_.size() - 1};
    }
    return std::nullopt;
  }
  void Done(size_t tag, core::PublishOutcome outcome) override {
    const std::string& room = tags_.at(tag);
    in_flight_.erase(room);
    done_.push_back(room + ":" + core::PublishStatusName(outcome.status));
  }
  milliseconds Pause() override { return milliseconds(100); }
  bool Idle() override {
    for (auto& [room, messages] : rooms_) {
      if (next_[room] < messages.size()) return true;
    }
    return false;
  }

  const std::vector<std::string>& done() const { return done_; }

 private:
  std::map<std::string, std::vector<core::PublishMessage>> rooms_;
  std::map<std::string, size_t> next_;
  std::set<std::string> in_flight_;
  std::vector<std::string> tags_;  // by tag: the room
  std::vector<std::string> done_;
};

TEST_F(TencentImPublisherTest, AStreamSendsARoomsNextMessageWhenItsAnswerComes) {
  // The slow room's group answers after a second, the fast room's at once.
  server_.SetFaultFunction([](const testing::FakeImRequest& r) -> std::optional<FakeImFault> {
    if (r.room_id == "slow") return FakeImFault::Ok().After(milliseconds(1000));
    return std::nullopt;
  });
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  std::map<std::string, std::vector<core::PublishMessage>> rooms;
  for (int i = 0; i < 3; ++i) {
    rooms["fast"].push_back(Msg(Event("evt-fast-" + std::to_string(i), "RoomGiftSent", "fast")));
  }
  for (int i = 0; i < 2; ++i) {
    rooms["slow"].push_back(Msg(Event("evt-slow-" + std::to_string(i), "RoomGiftSent", "slow")));
  }
  ChainFeed feed(std::move(rooms));
  publisher->PublishStream(feed, kTimeout, 8);
  // Sent in waves, the fast room's second message would wait for the slow room's answer.
  EXPECT_THAT(feed.done(),
              ::testing::ElementsAre("fast:published", "fast:published", "fast:published",
                                     "slow:published", "slow:published"));
  EXPECT_EQ(server_.Requests().size(), 5u);
}

TEST_F(TencentImPublisherTest, AStreamKeepsAtMostMaxInFlightRequestsOpen) {
  server_.SetDefaultFault(FakeImFault::Ok().After(milliseconds(100)));
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  std::map<std::string, std::vector<core::PublishMessage>> rooms;
  for (int i = 0; i < 10; ++i) {
    const std::string room = "room-" + std::to_string(i);
    rooms[room].push_back(Msg(Event("evt-stream-" + std::to_string(i), "RoomGiftSent", room)));
    rooms[room].push_back(Msg(Event("evt-stream-b" + std::to_string(i), "RoomGiftSent", room)));
  }
  ChainFeed feed(std::move(rooms));
  publisher->PublishStream(feed, kTimeout, 3);
  ASSERT_EQ(feed.done().size(), 20u);
  for (const std::string& outcome : feed.done()) {
    EXPECT_THAT(outcome, ::testing::EndsWith(":published"));
  }
  EXPECT_LE(server_.Stats().max_concurrent, 3u);
  EXPECT_GT(server_.Stats().max_concurrent, 1u);
}

TEST_F(TencentImPublisherTest, RequestsPerSecondBudgetIsRespected) {
  TencentImOptions options = server_.ClientOptions();
  options.requests_per_second = 20;
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  std::vector<core::PublishMessage> batch;
  for (int i = 0; i < 50; ++i) {
    batch.push_back(Msg(Event("evt-rps-" + std::to_string(i))));
  }
  auto start = SteadyClock::now();
  auto outcomes = publisher->PublishMany(batch, milliseconds(5000), 8);
  milliseconds elapsed = Since(start);
  for (const auto& out : outcomes) {
    EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  }
  // 20/s plus a 2-request burst, with slack for arrival jitter on a busy machine; without the
  // budget all 50 would arrive within a fraction of a second.
  EXPECT_LE(server_.MaxRequestsInWindow(milliseconds(1000)), 26u);
  EXPECT_GE(elapsed, milliseconds(2000)) << "48 paced requests at 20/s take ~2.4s";
}

TEST_F(TencentImPublisherTest, GlobalRateLimitAnswerSlowsLaterRequests) {
  TencentImOptions options = server_.ClientOptions();
  options.requests_per_second = 40;
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  server_.PushFault(FakeImFault::ImError(60007, "REST rate"));
  ASSERT_EQ(publisher->Publish(Msg(Event("evt-fc-0")), kTimeout).status,
            core::PublishStatus::kRateLimited);
  std::vector<core::PublishMessage> batch;
  for (int i = 1; i <= 22; ++i) {
    batch.push_back(Msg(Event("evt-fc-" + std::to_string(i))));
  }
  auto start = SteadyClock::now();
  auto outcomes = publisher->PublishMany(batch, kTimeout, 8);
  milliseconds elapsed = Since(start);
  for (const auto& out : outcomes) {
    EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  }
  // Halved to 20/s: ~2 burst + 20 paced take about a second; at 40/s it would be about half.
  EXPECT_GE(elapsed, milliseconds(800));
}

TEST_F(TencentImPublisherTest, ExhaustedBudgetIsRateLimitedWithoutSending) {
  TencentImOptions options = server_.ClientOptions();
  options.requests_per_second = 1;
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  EXPECT_EQ(publisher->Publish(Msg(Event("evt-b1")), milliseconds(300)).status,
            core::PublishStatus::kPublished);
  auto start = SteadyClock::now();
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-b2")), milliseconds(300));
  EXPECT_EQ(out.status, core::PublishStatus::kRateLimited);
  EXPECT_EQ(out.error, "request budget: no slot within 300ms");
  EXPECT_LT(Since(start), milliseconds(1000));
  EXPECT_EQ(server_.Requests().size(), 1u);
}

TEST_F(TencentImPublisherTest, SkippedTypesNeverReachTheServer) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-skip", "RoomCreated")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kSkipped);
  EXPECT_TRUE(out.delivered());
  std::vector<core::PublishMessage> batch = {Msg(Event("evt-s1", "RoomHeatChanged")),
                                             Msg(Event("evt-s2")),
                                             Msg(Event("evt-s3", "RoomRankChanged"))};
  auto outcomes = publisher->PublishMany(batch, kTimeout, 4);
  EXPECT_EQ(outcomes[0].status, core::PublishStatus::kSkipped);
  EXPECT_EQ(outcomes[1].status, core::PublishStatus::kPublished);
  EXPECT_EQ(outcomes[2].status, core::PublishStatus::kSkipped);
  auto requests = server_.Requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].event_id, "evt-s2");
  EXPECT_EQ(server_.Stats().requests, 1u);
}

TEST_F(TencentImPublisherTest, UnbuildableEnvelopeIsPermanentWithoutSending) {
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  Envelope bad = Event("evt-bad");
  bad.payload = "not json";
  core::PublishOutcome out = publisher->Publish(Msg(bad), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPermanent);
  EXPECT_NE(out.error.find("cannot build IM request"), std::string::npos) << out.error;
  EXPECT_EQ(server_.Stats().requests, 0u);
}

TEST_F(TencentImPublisherTest, RefusedConnectionIsRetryable) {
  TencentImOptions options = server_.ClientOptions();
  {
    FakeImServer closed;  // take a free port, then free it again
    ASSERT_TRUE(closed.running());
    options.endpoint = closed.endpoint();
  }
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-refused")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kRetryable) << out.error;
  EXPECT_NE(out.error.find("Couldn't connect to server [7]"), std::string::npos) << out.error;
  ExpectSafeError(out, options.secret_key, "refused");
}

// The environment's proxy variables are never used: with them naming a port nothing listens on,
// a publisher without [tencent_im] proxy still reaches IM directly (libcurl would otherwise go
// through http_proxy / ALL_PROXY silently).
TEST_F(TencentImPublisherTest, TheEnvironmentsProxyIsIgnored) {
  std::string dead;
  {
    FakeImServer closed;  // take a free port, then free it again
    ASSERT_TRUE(closed.running());
    dead = closed.endpoint();
  }
  using ::room_outbox::testing::ScopedEnv;
  ScopedEnv http("http_proxy", dead.c_str());
  ScopedEnv https("https_proxy", dead.c_str());
  ScopedEnv all("ALL_PROXY", dead.c_str());
  ScopedEnv all_lower("all_proxy", dead.c_str());
  ScopedEnv no("NO_PROXY", nullptr);
  ScopedEnv no_lower("no_proxy", nullptr);
  auto publisher = Make();
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-no-proxy")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kPublished) << out.error;
  EXPECT_EQ(server_.Stats().delivered, 1u);
}

// [tencent_im] proxy is used for every request, whatever NO_PROXY says: a proxy that is not
// there makes the publish fail before IM sees anything.
TEST_F(TencentImPublisherTest, TheConfiguredProxyIsUsedWhateverNoProxySays) {
  TencentImOptions options = server_.ClientOptions();
  {
    FakeImServer closed;
    ASSERT_TRUE(closed.running());
    options.proxy = closed.endpoint();
  }
  using ::room_outbox::testing::ScopedEnv;
  ScopedEnv no("NO_PROXY", "*");
  ScopedEnv no_lower("no_proxy", "*");
  auto publisher = Make(options);
  ASSERT_TRUE(publisher);
  core::PublishOutcome out = publisher->Publish(Msg(Event("evt-proxy")), kTimeout);
  EXPECT_EQ(out.status, core::PublishStatus::kRetryable) << out.error;
  EXPECT_NE(out.error.find("[7]"), std::string::npos) << out.error;
  EXPECT_EQ(server_.Stats().requests, 0u);
}

TEST(TencentImPublisherFactoryTest, ValidatesOptionsNamingTheKey) {
  struct Case {
    const char* name;
    std::function<void(TencentImOptions&)> change;
    const char* key;  // empty: accepted
  };
  const Case cases[] = {
      {"https default", [](TencentImOptions&) {}, ""},
      {"http localhost", [](TencentImOptions& o) { o.endpoint = "http://localhost:8080"; }, ""},
      {"http 127/8", [](TencentImOptions& o) { o.endpoint = "http://127.1.2.3:8080/"; }, ""},
      {"http ::1", [](TencentImOptions& o) { o.endpoint = "http://[::1]:8080"; }, ""},
      {"http remote", [](TencentImOptions& o) { o.endpoint = "http://console.tim.qq.com"; },
       "tencent_im.endpoint"},
      {"http private ip", [](TencentImOptions& o) { o.endpoint = "http://10.0.0.1:80"; },
       "tencent_im.endpoint"},
      {"ftp", [](TencentImOptions& o) { o.endpoint = "ftp://127.0.0.1"; }, "tencent_im.endpoint"},
      {"no scheme", [](TencentImOptions& o) { o.endpoint = "console.tim.qq.com"; },
       "tencent_im.endpoint"},
      {"query", [](TencentImOptions& o) { o.endpoint = "https://console.tim.qq.com/?a=1"; },
       "tencent_im.endpoint"},
      {"empty endpoint", [](TencentImOptions& o) { o.endpoint.clear(); }, "tencent_im.endpoint"},
      {"no app id", [](TencentImOptions& o) { o.sdk_app_id = 0; }, "tencent_im.sdk_app_id"},
      {"no identifier", [](TencentImOptions& o) { o.admin_identifier.clear(); },
       "tencent_im.admin_identifier"},
      {"no secret", [](TencentImOptions& o) { o.secret_key.clear(); }, "tencent_im.secret_key"},
      {"negative rps", [](TencentImOptions& o) { o.requests_per_second = -1; },
       "tencent_im.requests_per_second"},
      {"infinite rps",
       [](TencentImOptions& o) { o.requests_per_second = std::numeric_limits<double>::infinity(); },
       "tencent_im.requests_per_second"},
      {"nan app rps",
       [](TencentImOptions& o) {
         o.app_requests_per_second = std::numeric_limits<double>::quiet_NaN();
       },
       "tencent_im.app_requests_per_second"},
      {"proxy with a password", [](TencentImOptions& o) { o.proxy = "http://u:p@proxy:3128"; },
       "tencent_im.proxy"},
      {"a proxy", [](TencentImOptions& o) { o.proxy = "socks5h://proxy:1080"; }, ""},
  };
  for (const auto& c : cases) {
    TencentImOptions options;
    options.sdk_app_id = 1400000000;
    options.secret_key = "k";
    c.change(options);
    auto made = core::MakeTencentImPublisher(options);
    if (std::string(c.key).empty()) {
      EXPECT_TRUE(made) << c.name << ": " << made.error().message;
      continue;
    }
    ASSERT_FALSE(made) << c.name;
    EXPECT_EQ(made.error().code, ErrorCode::kInvalidArgument) << c.name;
    EXPECT_NE(made.error().message.find(c.key), std::string::npos)
        << c.name << ": " << made.error().message;
  }
}

}  // namespace
}  // namespace room_outbox
