// Operations without a database: the heartbeat, watchdog and heartbeat clock; the new
// metrics; JOURNAL_STREAM matching and syslog prefixes; park_permanent_after; SIGHUP reloads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.h"
#include "core/fd.h"
#include "core/publisher.h"
#include "daemon/beat_on_use_clock.h"
#include "daemon/journal_sink.h"
#include "daemon/reload.h"
#include "fake_clock.h"
#include "telemetry/health.h"
#include "telemetry/log_line.h"
#include "telemetry/metrics.h"

namespace room_outbox::relay {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;
using ::testing::Not;

// --- heartbeat, watchdog, heartbeat clock ---

TEST(HeartbeatTest, AgeCountsFromTheLastBeat) {
  testing::FakeClock clock;
  Heartbeat heartbeat(clock);
  heartbeat.Beat(1000);
  EXPECT_EQ(heartbeat.AgeMs(1000), 0);
  EXPECT_EQ(heartbeat.AgeMs(1750), 750);
  heartbeat.Beat(1800);
  EXPECT_EQ(heartbeat.AgeMs(1900), 100);
  EXPECT_EQ(heartbeat.AgeMs(1700), 0) << "never negative";
  EXPECT_EQ(heartbeat.beats(), 2u);
}

TEST(HeartbeatTest, FreshUntilTheStaleLimit) {
  testing::FakeClock clock;
  Heartbeat heartbeat(clock);
  heartbeat.Beat();
  EXPECT_TRUE(heartbeat.Fresh(seconds(60)));
  clock.Advance(seconds(60));
  EXPECT_TRUE(heartbeat.Fresh(seconds(60))) << "at the limit";
  clock.Advance(milliseconds(1));
  EXPECT_FALSE(heartbeat.Fresh(seconds(60)));
  heartbeat.Beat();
  EXPECT_TRUE(heartbeat.Fresh(seconds(60))) << "a beat makes it fresh again";
}

TEST(HeartbeatTest, TheAgeCountsFromConstructionUntilTheFirstBeat) {
  testing::FakeClock clock;
  Heartbeat heartbeat(clock);
  clock.Advance(milliseconds(1234));
  EXPECT_EQ(heartbeat.AgeMs(), 1234);
  EXPECT_EQ(heartbeat.beats(), 0u);
}

TEST(HeartbeatTest, StaleLimitIsThreePollsOrAMinute) {
  EXPECT_EQ(HealthStaleAfter(milliseconds(1000)), seconds(60));
  EXPECT_EQ(HealthStaleAfter(seconds(30)), seconds(90));
}

TEST(WatchdogTest, KicksAtMostOncePerHalfInterval) {
  Watchdog watchdog(std::chrono::microseconds(1'000'000));  // 1s: a kick per 500ms at most
  EXPECT_TRUE(watchdog.Kick(10'000));
  EXPECT_FALSE(watchdog.Kick(10'100));
  EXPECT_FALSE(watchdog.Kick(10'499));
  EXPECT_TRUE(watchdog.Kick(10'500));
  EXPECT_EQ(watchdog.kicks(), 2u);
}

TEST(WatchdogTest, HeartbeatKicksTheWatchdog) {
  Watchdog watchdog(std::chrono::microseconds(200'000));
  testing::FakeClock clock;
  Heartbeat heartbeat(clock, &watchdog);
  for (int64_t t = 0; t <= 1000; t += 50) heartbeat.Beat(t);
  EXPECT_EQ(watchdog.kicks(), 11u) << "one per 100ms over 1s";
}

TEST(WatchdogTest, FromEnvironmentHonoursWatchdogPid) {
  const char* old_usec = std::getenv("WATCHDOG_USEC");
  const char* old_pid = std::getenv("WATCHDOG_PID");
  ASSERT_EQ(old_usec, nullptr) << "the test runner is itself under a watchdog";
  unsetenv("WATCHDOG_PID");
  EXPECT_EQ(Watchdog::FromEnvironment(), nullptr);
  setenv("WATCHDOG_USEC", "4000000", 1);
  auto ours = Watchdog::FromEnvironment();
  ASSERT_NE(ours, nullptr);
  EXPECT_EQ(ours->interval(), std::chrono::microseconds(4'000'000));
  setenv("WATCHDOG_PID", std::to_string(getpid()).c_str(), 1);
  EXPECT_NE(Watchdog::FromEnvironment(), nullptr);
  setenv("WATCHDOG_PID", "1", 1);
  EXPECT_EQ(Watchdog::FromEnvironment(), nullptr) << "another process's watchdog";
  unsetenv("WATCHDOG_USEC");
  if (old_pid != nullptr) {
    setenv("WATCHDOG_PID", old_pid, 1);
  } else {
    unsetenv("WATCHDOG_PID");
  }
}

TEST(BeatOnUseClockTest, SleepsInSlicesAndBeatsOnEachOne) {
  testing::FakeClock inner;
  Heartbeat heartbeat(inner);
  BeatOnUseClock clock(inner, heartbeat, milliseconds(1000));
  relay::LoopSignal stop;
  const uint64_t before = heartbeat.beats();
  EXPECT_FALSE(clock.SleepFor(milliseconds(2500), stop));
  EXPECT_THAT(inner.sleeps(),
              ::testing::ElementsAre(milliseconds(1000), milliseconds(1000), milliseconds(500)));
  EXPECT_EQ(heartbeat.beats() - before, 4u) << "before the first slice and after each";
  (void)clock.NowMs();
  EXPECT_EQ(heartbeat.beats() - before, 5u) << "each clock reading of the loop beats";
  EXPECT_EQ(clock.NowMs(), inner.NowMs());
}

TEST(BeatOnUseClockTest, AStopEndsTheSleepAtTheNextSlice) {
  testing::FakeClock inner;
  Heartbeat heartbeat(inner);
  BeatOnUseClock clock(inner, heartbeat, milliseconds(100));
  relay::LoopSignal stop;
  int slept = 0;
  inner.on_sleep = [&] {
    if (++slept == 3) stop.RequestStop();
  };
  EXPECT_TRUE(clock.SleepFor(seconds(10), stop));
  EXPECT_EQ(inner.sleeps().size(), 3u);
}

// --- metrics ---

TEST(OpsMetricsTest, PendingGaugesAreNaNUntilTheDatabaseWasRead) {
  testing::FakeClock clock;
  Metrics m(clock);
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_pending_total NaN\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_oldest_pending_age_ms NaN\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_stats_age_seconds NaN\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_db_up 0\n"));
  EXPECT_FALSE(m.ready());
  m.SetPending(12, 3456);
  text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_pending_total 12\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_db_up 1\n")) << "a stats read proves the database";
  EXPECT_TRUE(m.ready());
}

TEST(OpsMetricsTest, PendingGaugesGoNaNWhenTheLastReadIsTooOld) {
  testing::FakeClock clock;
  Metrics m(clock);
  m.SetStatsStaleAfter(milliseconds(5000));
  m.SetPending(5, 10);
  clock.Advance(milliseconds(5000));
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("\nroom_outbox_pending_total 5\n"))
      << "at the limit the read is still fresh";
  clock.Advance(milliseconds(1));
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_pending_total NaN\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_stats_age_seconds 5.001\n"))
      << "the age itself stays known";
  EXPECT_EQ(m.stats_age_ms(), 5001);
}

TEST(OpsMetricsTest, ReadinessFollowsTheDatabaseAndTheBreaker) {
  testing::FakeClock clock;
  Metrics m(clock);
  m.SetDbUp(true);
  EXPECT_TRUE(m.ready());
  m.SetImBreakerOpen(true);
  EXPECT_FALSE(m.ready());
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("\nroom_outbox_im_breaker_open 1\n"));
  m.SetImBreakerOpen(false);
  m.SetDbUp(false);
  EXPECT_FALSE(m.ready());
}

TEST(OpsMetricsTest, FailuresByReasonBesideTheSeedTotal) {
  testing::FakeClock clock;
  Metrics m(clock);
  m.AddPublishFailure(3);
  m.AddPublishFailureByReason(FailureReason::kUnknownOutcome);
  m.AddPublishFailureByReason(FailureReason::kPermanent, 2);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_publish_failure_total 3\n"));
  EXPECT_THAT(text,
              HasSubstr("room_outbox_publish_failures_by_reason_total{reason=\"timeout\"} 1\n"));
  EXPECT_THAT(text,
              HasSubstr("room_outbox_publish_failures_by_reason_total{reason=\"permanent\"} 2\n"));
  for (const char* reason : {"http", "im_error", "rate_limited", "undecodable"}) {
    EXPECT_THAT(text, HasSubstr("room_outbox_publish_failures_by_reason_total{reason=\"" +
                                std::string(reason) + "\"} 0\n"));
  }
}

TEST(OpsMetricsTest, FailureReasonOfAnOutcome) {
  core::PublishOutcome o;
  o.status = core::PublishStatus::kUnknown;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kUnknownOutcome);
  o.status = core::PublishStatus::kRateLimited;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kRateLimited);
  o.status = core::PublishStatus::kPermanent;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kPermanent);
  o.status = core::PublishStatus::kRetryable;
  o.http_status = 502;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kHttp);
  o.http_status = 0;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kHttp) << "no HTTP answer";
  o.http_status = 200;
  o.im_error_code = 90994;
  EXPECT_EQ(FailureReasonOf(o), FailureReason::kImError);
}

TEST(OpsMetricsTest, GaugesAndBuildInfo) {
  testing::FakeClock clock;
  Metrics m(clock);
  Heartbeat heartbeat(clock);
  m.AttachHeartbeat(&heartbeat);
  m.SetBuildInfo("0.1.0", "abc\"def");
  m.SetInFlight(4);
  m.AddInFlight(-1);
  const std::string before = m.RenderPrometheus();
  EXPECT_THAT(before, HasSubstr("\nroom_outbox_parked_rows NaN\n"));
  m.SetParkedRows(7);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_parked_rows 7\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_in_flight_rows 3\n"));
  EXPECT_THAT(text,
              HasSubstr("room_outbox_build_info{version=\"0.1.0\",revision=\"abc\\\"def\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_worker_heartbeat_age_seconds 0\n"));
  clock.Advance(milliseconds(2500));
  EXPECT_THAT(m.RenderPrometheus(),
              HasSubstr("\nroom_outbox_worker_heartbeat_age_seconds 2.500\n"));
  // Every family has HELP and TYPE once.
  for (const char* name :
       {"room_outbox_db_up", "room_outbox_parked_rows",
        "room_outbox_publish_failures_by_reason_total", "room_outbox_build_info"}) {
    EXPECT_THAT(text, HasSubstr(std::string("# HELP ") + name + " "));
    EXPECT_THAT(text, HasSubstr(std::string("# TYPE ") + name + " "));
  }
}

// --- journald ---

TEST(JournalSinkTest, JournalStreamMustNameTheDescriptorsFile) {
  char path[] = "/tmp/journal-stream-test-XXXXXX";
  const core::Fd fd(mkstemp(path));
  ASSERT_TRUE(fd);
  struct stat st {};
  ASSERT_EQ(fstat(fd.get(), &st), 0);
  const std::string dev_ino = std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
  EXPECT_TRUE(JournalStreamNames(dev_ino, fd.get()));
  EXPECT_FALSE(JournalStreamNames(std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino + 1),
                                  fd.get()));
  for (const char* bad : {"", ":", "12", "a:b", "1:2:3", "-1:5"}) {
    EXPECT_FALSE(JournalStreamNames(bad, fd.get())) << bad;
  }
  unlink(path);
}

TEST(JournalSinkTest, SyslogPrefixes) {
  EXPECT_EQ(SyslogPrefix(spdlog::level::err), "<3>");
  EXPECT_EQ(SyslogPrefix(spdlog::level::warn), "<4>");
  EXPECT_EQ(SyslogPrefix(spdlog::level::info), "<6>");
  EXPECT_EQ(SyslogPrefix(spdlog::level::debug), "<7>");
  EXPECT_EQ(SyslogPrefix(spdlog::level::trace), "<7>");
  EXPECT_EQ(SyslogPrefix(spdlog::level::critical), "<2>");
}

// --- config and reload ---

class OpsConfigTest : public ::testing::Test {
 protected:
  OpsConfigTest() {
    char tmpl[] = "/tmp/ops-config-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    unsetenv("ROOM_OUTBOX_TIM_SECRET_KEY");
    unsetenv("ROOM_OUTBOX_MYSQL_PASSWORD");
    unsetenv("CREDENTIALS_DIRECTORY");
  }
  ~OpsConfigTest() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::trunc) << text;
    return path;
  }
  std::filesystem::path dir_;
};

TEST_F(OpsConfigTest, ParkPermanentAfterDefaultsToNeverAndIsRendered) {
  auto c = LoadConfig(Write("a.toml", ""));
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->outbox_worker.park_permanent_after, 0);
  auto three = LoadConfig(Write("b.toml", "[outbox_worker]\npark_permanent_after = 3\n"));
  ASSERT_TRUE(three) << three.error().message;
  EXPECT_EQ(three->outbox_worker.park_permanent_after, 3);
  const std::string rendered = RenderEffectiveConfig(*three);
  EXPECT_THAT(rendered, HasSubstr("\npark_permanent_after = 3\n"));
  auto again = LoadConfig(Write("c.toml", rendered));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->outbox_worker.park_permanent_after, 3);
}

TEST_F(OpsConfigTest, ParkPermanentAfterMustNotBeNegative) {
  auto c = LoadConfig(Write("a.toml", "[outbox_worker]\npark_permanent_after = -1\n"));
  ASSERT_FALSE(c);
  EXPECT_THAT(c.error().message, HasSubstr("park_permanent_after"));
  EXPECT_THAT(c.error().message, HasSubstr(">= 0"));
  auto text = LoadConfig(Write("b.toml", "[outbox_worker]\npark_permanent_after = \"3\"\n"));
  EXPECT_FALSE(text);
}

TEST_F(OpsConfigTest, ReloadAppliesTheLogLevelAndReportsSecrets) {
  Write("key", "old-key\n");
  const std::string path = Write("relay.toml",
                                 "[tencent_im]\nsecret_key_file = \"key\"\n"
                                 "[log]\nlevel = \"info\"\n");
  auto running = LoadConfig(path);
  ASSERT_TRUE(running) << running.error().message;
  std::ostringstream out;
  auto logger = MakeStreamLogger(out, LogFormat::kText, spdlog::level::info);
  std::string applied_key;
  ConfigReloader reloader(*running, "", *logger,
                          {[&](const std::string& key) { applied_key = key; }});
  EXPECT_FALSE(logger->ShouldLog(spdlog::level::debug));

  Write("relay.toml", "[tencent_im]\nsecret_key_file = \"key\"\n[log]\nlevel = \"debug\"\n");
  Write("key", "new-key\n");
  ASSERT_TRUE(reloader.Reload());
  EXPECT_TRUE(logger->ShouldLog(spdlog::level::debug));
  EXPECT_EQ(applied_key, "new-key");
  EXPECT_THAT(out.str(), HasSubstr("configuration reloaded"));
  EXPECT_THAT(out.str(), HasSubstr("log_level=debug"));
  EXPECT_THAT(out.str(), Not(HasSubstr("new-key"))) << "never a secret in the log";

  Write("relay.toml", "[log\nlevel = ");
  EXPECT_FALSE(reloader.Reload());
  EXPECT_THAT(out.str(), HasSubstr("configuration not reloaded"));
  EXPECT_TRUE(logger->ShouldLog(spdlog::level::debug)) << "the running level stays";
}

TEST_F(OpsConfigTest, ASecretKeyHookSetLaterIsUsed) {
  Write("key", "old-key\n");
  const std::string path = Write("relay.toml", "[tencent_im]\nsecret_key_file = \"key\"\n");
  auto running = LoadConfig(path);
  ASSERT_TRUE(running) << running.error().message;
  std::ostringstream out;
  auto logger = MakeStreamLogger(out, LogFormat::kText, spdlog::level::info);
  ConfigReloader reloader(*running, "", *logger);
  Write("key", "key-2\n");
  ASSERT_TRUE(reloader.Reload());
  EXPECT_THAT(out.str(), HasSubstr("im_secret_key=\"changed, applied at the next restart\""));
  std::string applied;
  reloader.SetReloadSecretKey([&](const std::string& key) { applied = key; });
  ASSERT_TRUE(reloader.Reload());
  EXPECT_EQ(applied, "key-2");
  EXPECT_THAT(out.str(), HasSubstr("im_secret_key=\"changed, applied\""));
}

TEST_F(OpsConfigTest, ReloadKeepsAPinnedLevelAndNamesWhatNeedsARestart) {
  const std::string path = Write("relay.toml", "[log]\nlevel = \"info\"\n");
  auto running = LoadConfig(path);
  ASSERT_TRUE(running);
  running->log.level = "warn";  // --log-level warn
  std::ostringstream out;
  auto logger = MakeStreamLogger(out, LogFormat::kText, spdlog::level::info);
  ConfigReloader reloader(*running, "warn", *logger);
  Write("relay.toml", "[log]\nlevel = \"debug\"\n[outbox_worker]\nbatch_size = 7\n");
  ASSERT_TRUE(reloader.Reload());
  EXPECT_FALSE(logger->ShouldLog(spdlog::level::info)) << "--log-level warn still wins";
  EXPECT_THAT(out.str(), HasSubstr("log_level_pinned_by=--log-level"));
  EXPECT_THAT(out.str(), HasSubstr("other_changes=\"applied at the next restart\""));
}

}  // namespace
}  // namespace room_outbox::relay
