#include "hook_fixture.h"

#include <utility>

namespace room_outbox::testing {

using ::testing::_;
using ::testing::AnyNumber;
using ::testing::Return;
using ::testing::StrictMock;

HookOptions HookFixture::DefaultOptions() {
  HookOptions options;
  options.node_id = "node-a";
  options.sync_publish_timeout = std::chrono::milliseconds(250);
  options.log = [this](LogLevel, std::string_view line) { logs_.emplace_back(line); };
  return options;
}

void HookFixture::Build(const HookOptions& options, std::function<bool(std::string_view)> sends) {
  auto store = std::make_unique<StrictMock<MockHookStore>>();
  auto publisher = std::make_unique<StrictMock<MockPublisher>>();
  store_ = store.get();
  publisher_ = publisher.get();
  if (sends) {
    EXPECT_CALL(*publisher_, Sends(_)).Times(AnyNumber()).WillRepeatedly(std::move(sends));
  } else {
    EXPECT_CALL(*publisher_, Sends(_)).Times(AnyNumber()).WillRepeatedly(Return(true));
  }
  auto clock = std::make_unique<FakeClock>(1'000'000);
  clock_ = clock.get();
  hook_ = internal::MakeHook(options, std::move(store), std::move(publisher), std::move(clock),
                             breaker_);
}

void HookFixture::ExpectCommitOfRow(int64_t id) {
  EXPECT_CALL(*store_, CommitCommand(_, _))
      .WillOnce([this, id](const internal::CommitRequest& request, const CallerStatements&) {
        last_request_ = request;
        tokens_[id] = request.token;
        internal::CommitWrite write;
        write.row_ids = {id};
        write.lease_start_ms = clock_->SteadyMs();
        return core::Result<internal::CommitWrite>(write);
      });
}

}  // namespace room_outbox::testing
