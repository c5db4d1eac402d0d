// HookFixture: a Hook over its seams as the hook's unit tests hand them over, in one place:
// strict mocks of the store and the publisher (owned by the Hook; raw pointers kept here), a
// FakeClock at 1,000,000 ms, the Hook's log lines in logs_, and the sync breaker it is given.
//
// Build() makes the Hook from DefaultOptions() as a test adjusted them; the publisher sends every
// event type unless the test passes its own rule. ExpectCommitOfRow(id): the store commits the
// next command once, as the one row `id` leased from the clock's now; the request is kept in
// last_request_ and its token in tokens_[id].
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "fake_clock.h"
#include "hook_impl.h"
#include "mock_hook_store.h"
#include "mock_publisher.h"
#include "sync_breaker.h"

namespace room_outbox::testing {

class HookFixture : public ::testing::Test {
 protected:
  // node_id "node-a", sync_publish_timeout 250 ms, log lines into logs_.
  HookOptions DefaultOptions();
  // `sends`: Publisher::Sends for each event type (empty: every type is sent).
  void Build(const HookOptions& options, std::function<bool(std::string_view)> sends = {});
  void ExpectCommitOfRow(int64_t id);

  std::shared_ptr<core::ImBreaker> breaker_ = internal::MakeSyncBreaker();
  ::testing::StrictMock<MockHookStore>* store_ = nullptr;
  ::testing::StrictMock<MockPublisher>* publisher_ = nullptr;
  FakeClock* clock_ = nullptr;
  std::vector<std::string> logs_;  // before hook_, which may log as it closes
  std::unique_ptr<Hook> hook_;
  internal::CommitRequest last_request_;
  std::map<int64_t, std::string> tokens_;
};

}  // namespace room_outbox::testing
