// ReadOnlyWatch: a read-only episode starts at the first refusal (one warn line, the gauge and
// /readyz's reason), repeats add no line, a failure of another kind clears the gauge but not the
// episode, and the first claim or mark that goes through ends it (one info line).
#include "daemon/read_only_watch.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "core/mysql/mysql_error.h"
#include "mocks/fake_clock.h"

namespace room_outbox::relay {
namespace {

size_t Count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

class ReadOnlyWatchTest : public ::testing::Test {
 protected:
  std::ostringstream out_;
  std::unique_ptr<Logger> logger_ = MakeStreamLogger(out_, LogFormat::kText, spdlog::level::info);
  testing::FakeClock clock_;
  Metrics metrics_{clock_};
  ReadOnlyWatch watch_{metrics_, *logger_, clock_, "node-1"};
  const Error refusal_ = core::FromMysqlErrno(
      1290, "mysql_stmt_execute(lock_rows_1)",
      "The MariaDB server is running with the --read-only option so it cannot execute this "
      "statement");
  const Error lost_ = core::FromMysqlErrno(2013, "mysql_stmt_execute(lock_rows_1)",
                                           "Lost connection to server during query");
};

TEST_F(ReadOnlyWatchTest, AnEpisodeIsLoggedOnceAndEndsWithTheFirstWriteThatGoesThrough) {
  metrics_.SetDbUp(true);
  watch_.Observe(&refusal_);
  watch_.Observe(&refusal_);
  watch_.Observe(&refusal_);

  EXPECT_TRUE(watch_.in_episode());
  EXPECT_TRUE(metrics_.db_read_only());
  EXPECT_EQ(metrics_.db_read_only_refusal(), refusal_.message);
  EXPECT_FALSE(metrics_.ready());
  EXPECT_EQ(Count(out_.str(), "database is read-only: nothing is claimed"), 1u) << out_.str();
  EXPECT_NE(metrics_.RenderPrometheus().find("room_outbox_db_read_only 1"), std::string::npos);

  clock_.Advance(std::chrono::milliseconds(2500));
  watch_.Observe(nullptr);

  EXPECT_FALSE(watch_.in_episode());
  EXPECT_FALSE(metrics_.db_read_only());
  EXPECT_TRUE(metrics_.ready());
  EXPECT_EQ(Count(out_.str(), "database accepts writes again"), 1u) << out_.str();
  EXPECT_NE(out_.str().find("read_only_ms=2500 refusals=3"), std::string::npos) << out_.str();
  EXPECT_NE(metrics_.RenderPrometheus().find("room_outbox_db_read_only 0"), std::string::npos);
}

TEST_F(ReadOnlyWatchTest, AnotherFailureClearsTheGaugeButNotTheEpisode) {
  watch_.Observe(&refusal_);
  watch_.Observe(&lost_);  // the server went away in the middle of the failover

  EXPECT_FALSE(metrics_.db_read_only());
  EXPECT_TRUE(watch_.in_episode());

  watch_.Observe(&refusal_);  // back, still read-only: the same episode, no second line
  EXPECT_TRUE(metrics_.db_read_only());
  EXPECT_EQ(Count(out_.str(), "database is read-only: nothing is claimed"), 1u) << out_.str();
  EXPECT_EQ(Count(out_.str(), "database accepts writes again"), 0u) << out_.str();
}

TEST_F(ReadOnlyWatchTest, FailuresWithoutARefusalNeverStartAnEpisode) {
  watch_.Observe(&lost_);
  watch_.Observe(nullptr);

  EXPECT_FALSE(watch_.in_episode());
  EXPECT_FALSE(metrics_.db_read_only());
  EXPECT_EQ(out_.str(), "");
}

}  // namespace
}  // namespace room_outbox::relay
