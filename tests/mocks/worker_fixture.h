// WorkerFixture: an OutboxWorker's collaborators as its unit tests hand them over, in one place:
// strict mocks of the store (and of the second store for the claim made ahead) and of the
// publisher, a FakeClock, the loop signal, metrics and a logger writing to log_, the worker's
// options, claims and rows (worker_rows.h), a scripted publisher and the recorded marks.
//
// The mocks are StrictMock: a store or publisher call a test did not expect fails it. The
// constructor allows only what every test of the worker meets and does not care about: Stats
// (the gauges), Publisher::Sends (false for the types in not_sent_) and breaker_open (what
// breaker_open_ says).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "fake_clock.h"
#include "mock_publisher.h"
#include "mock_relay_store.h"
#include "worker/outbox_worker.h"
#include "worker_rows.h"

namespace room_outbox::testing {

class WorkerFixture : public ::testing::Test {
 protected:
  static constexpr char kToken[] = "claim-token";

  // Options: node_id node-1, poll_interval 1 s, batch_size 100, publish_timeout 3 s,
  // max_in_flight 4, per-room order, lease 30 s, room_min_interval 0 (no pacing).
  WorkerFixture();

  // A worker over the fixture's collaborators; `ahead` (e.g. &ahead_store_) makes its claims
  // ahead (OutboxWorker::Run only).
  relay::OutboxWorker MakeWorker(relay::RelayStore* ahead = nullptr);

  // A claim of `rows` by `token`, at the clock's wall time, leased for options_.lease.
  relay::Claim MakeClaim(std::vector<relay::OutboxRow> rows) {
    return MakeClaim(kToken, std::move(rows));
  }
  relay::Claim MakeClaim(const std::string& token, std::vector<relay::OutboxRow> rows);

  // A row of `room` with a valid envelope (worker_rows.h).
  static relay::OutboxRow Row(int64_t id, const std::string& room,
                              const std::string& type = "RoomGiftSent", int64_t retry_count = 0) {
    return WorkerRow(id, room, type, retry_count);
  }
  static relay::OutboxRow Row(int64_t id, const std::string& room, int64_t retry_count) {
    return WorkerRow(id, room, "RoomGiftSent", retry_count);
  }

  // Publishes through a script: each event's outcomes in turn from outcomes_ (Published when
  // none is left); records the event ids of every PublishMany call in calls_ (a packed message's
  // as "evt-1+evt-2+..."; its outcome is its first event's) and runs
  // during_publish_ inside each. Checks the timeout and max_in_flight the worker passes.
  void ScriptPublisher();

  // Records every MarkPublished, MarkFailed and Release of kToken (each succeeds for all its
  // rows) in published_, failed_ and released_. A MarkParked stays unexpected.
  void RecordMarks();
  // Records every MarkParked of kToken (succeeding) in parked_.
  void RecordParks();

  static std::vector<int64_t> Ids(const std::vector<relay::FailedAttempt>& attempts);
  std::vector<int64_t> FailedIds() const { return Ids(failed_); }

  relay::WorkerOptions options_;
  ::testing::StrictMock<MockRelayStore> store_;
  ::testing::StrictMock<MockRelayStore> ahead_store_;
  ::testing::StrictMock<MockPublisher> publisher_;
  FakeClock clock_;
  relay::LoopSignal stop_;
  relay::Metrics metrics_;
  std::ostringstream log_;
  std::unique_ptr<relay::Logger> logger_;

  // The scripted publisher (ScriptPublisher) and what the constructor's expectations answer.
  std::map<std::string, std::deque<core::PublishOutcome>> outcomes_;
  std::vector<std::vector<std::string>> calls_;
  std::function<void()> during_publish_;
  std::set<std::string> not_sent_;  // types for which the publisher's Sends() is false
  bool breaker_open_ = false;       // what the publisher's breaker_open() answers

  // The recorded marks (RecordMarks, RecordParks).
  std::vector<int64_t> published_;
  std::vector<int64_t> released_;
  std::vector<relay::FailedAttempt> failed_;
  std::vector<relay::FailedAttempt> parked_;
  int mark_published_calls_ = 0;
};

}  // namespace room_outbox::testing
