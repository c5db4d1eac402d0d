#include "config/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "core/config/duration.h"
#include "core/config/duration_limits.h"
#include "support/config_fixture.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using std::chrono::milliseconds;

using ::room_outbox::testing::ScopedEnv;

class ConfigTest : public ::room_outbox::testing::ConfigFixture {};

TEST_F(ConfigTest, EmptyFileGivesTheSeedDefaults) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  const WorkerConfig& w = c->outbox_worker;
  EXPECT_TRUE(w.enabled);
  EXPECT_EQ(w.poll_interval, milliseconds(1000));
  EXPECT_EQ(w.batch_size, 100u);
  EXPECT_EQ(w.publish_timeout, milliseconds(3000));
  EXPECT_EQ(w.retry_strategy, "fixed_interval");
  EXPECT_EQ(w.max_in_flight, 64u);
  EXPECT_EQ(w.ordering, Ordering::kPerRoom);
  EXPECT_EQ(w.lease, milliseconds(30000));
  EXPECT_EQ(w.room_min_interval, milliseconds(25));
  EXPECT_EQ(c->tencent_im.endpoint, "https://console.tim.qq.com");
  EXPECT_EQ(c->tencent_im.usersig_ttl, std::chrono::seconds(86400));
  EXPECT_EQ(c->tencent_im.skip_event_types,
            (std::vector<std::string>{"RoomCreated", "RoomHeatChanged", "RoomRankChanged"}));
  EXPECT_EQ(c->tencent_im.requests_per_second, 200);
  EXPECT_EQ(c->hook.sync_publish_timeout, milliseconds(500));
  EXPECT_EQ(c->log.level, "info");
  EXPECT_EQ(c->log.format, LogFormat::kText);
  EXPECT_EQ(c->metrics.listen, "");
  char host[256] = {};
  ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
  EXPECT_EQ(c->node_id, host);
}

// A Kubernetes pod passes its name through the downward API: ROOM_OUTBOX_NODE_ID wins over the
// file's node_id and over the host name; set but empty, it changes nothing.
TEST_F(ConfigTest, NodeIdFromTheEnvironmentWinsOverTheFile) {
  {
    ScopedEnv pod{"ROOM_OUTBOX_NODE_ID", "room-service-7d9f-x2k4p"};
    auto c = Load("node_id = \"n1\"\n");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->node_id, "room-service-7d9f-x2k4p");
  }
  ScopedEnv empty{"ROOM_OUTBOX_NODE_ID", ""};
  auto c = Load("node_id = \"n1\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->node_id, "n1");
}

TEST_F(ConfigTest, ValuesAreRead) {
  auto c = Load(R"(
node_id = "n1"
[mysql]
host = "db"
port = 3307
socket = "/run/x.sock"
user = "u"
database = "d"
connect_timeout = "2s"
[outbox_worker]
enabled = false
poll_interval = "250ms"
batch_size = 7
publish_timeout = "1m"
retry_strategy = "fixed_interval"
max_in_flight = 1
ordering = "none"
lease = "1h"
room_min_interval = "0ms"
[tencent_im]
endpoint = "https://adminapisgp.im.qcloud.com/"
sdk_app_id = 1400000001
admin_identifier = "admin"
usersig_ttl = "2h"
group_id_prefix = "g_"
skip_event_types = []
requests_per_second = 12.5
ca_file = "/etc/ssl/ca.pem"
[hook]
sync_publish_timeout = "800ms"
[log]
level = "debug"
format = "json"
[metrics]
listen = "127.0.0.1:9500"
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->node_id, "n1");
  EXPECT_EQ(c->mysql.host, "db");
  EXPECT_EQ(c->mysql.port, 3307);
  EXPECT_EQ(c->mysql.socket, "/run/x.sock");
  EXPECT_EQ(c->mysql.connect_timeout, milliseconds(2000));
  EXPECT_FALSE(c->outbox_worker.enabled);
  EXPECT_EQ(c->outbox_worker.poll_interval, milliseconds(250));
  EXPECT_EQ(c->outbox_worker.batch_size, 7u);
  EXPECT_EQ(c->outbox_worker.publish_timeout, milliseconds(60000));
  EXPECT_EQ(c->outbox_worker.max_in_flight, 1u);
  EXPECT_EQ(c->outbox_worker.ordering, Ordering::kNone);
  EXPECT_EQ(c->outbox_worker.lease, milliseconds(3600000));
  EXPECT_EQ(c->outbox_worker.room_min_interval, milliseconds(0));
  EXPECT_EQ(c->tencent_im.endpoint, "https://adminapisgp.im.qcloud.com");
  EXPECT_EQ(c->tencent_im.sdk_app_id, 1400000001u);
  EXPECT_EQ(c->tencent_im.usersig_ttl, std::chrono::seconds(7200));
  EXPECT_TRUE(c->tencent_im.skip_event_types.empty());
  EXPECT_EQ(c->tencent_im.requests_per_second, 12.5);
  EXPECT_EQ(c->hook.sync_publish_timeout, milliseconds(800));
  EXPECT_EQ(c->log.format, LogFormat::kJson);
  EXPECT_EQ(c->metrics.listen, "127.0.0.1:9500");
}

TEST_F(ConfigTest, NonPositiveValuesFallBackToTheDefaults) {
  auto c = Load(R"(
[outbox_worker]
poll_interval = "0s"
batch_size = -5
publish_timeout = "-3s"
max_in_flight = 0
lease = "0"
[mysql]
connect_timeout = "0ms"
)");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->outbox_worker.poll_interval, milliseconds(1000));
  EXPECT_EQ(c->outbox_worker.batch_size, 100u);
  EXPECT_EQ(c->outbox_worker.publish_timeout, milliseconds(3000));
  EXPECT_EQ(c->outbox_worker.max_in_flight, 64u);
  EXPECT_EQ(c->outbox_worker.lease, milliseconds(30000));
  EXPECT_EQ(c->mysql.connect_timeout, milliseconds(5000));

  auto zero = Load("[outbox_worker]\nbatch_size = 0\n");
  ASSERT_TRUE(zero);
  EXPECT_EQ(zero->outbox_worker.batch_size, 100u);
}

TEST_F(ConfigTest, EmptyRetryStrategyMeansFixedInterval) {
  auto c = Load("[outbox_worker]\nretry_strategy = \"\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->outbox_worker.retry_strategy, "fixed_interval");
}

TEST_F(ConfigTest, UnknownRetryStrategyIsRefusedNamingKeyAndValue) {
  const std::string path = (dir_ / "relay.toml").string();
  EXPECT_EQ(ErrorOf("[outbox_worker]\nretry_strategy = \"exponential\"\n"),
            path + ":2:18: outbox_worker.retry_strategy: unknown value \"exponential\" "
                   "(accepted: \"fixed_interval\" or empty)");
}

TEST_F(ConfigTest, UnknownKeysAreErrorsWithPosition) {
  const std::string path = (dir_ / "relay.toml").string();
  EXPECT_EQ(ErrorOf("[mysql]\nhost = \"x\"\n  hots = \"y\"\n"),
            path + ":3:3: unknown key 'mysql.hots'");
  EXPECT_EQ(ErrorOf("node_idd = \"x\"\n"), path + ":1:1: unknown key 'node_idd'");
  EXPECT_EQ(ErrorOf("[mysq]\nhost = \"x\"\n"), path + ":1:2: unknown key 'mysq'");
  EXPECT_THAT(ErrorOf("[outbox_worker]\npoll = \"1s\"\n"),
              HasSubstr("unknown key 'outbox_worker.poll'"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nsecret_key = \"inline\"\n"),
              HasSubstr("unknown key 'tencent_im.secret_key'"));
}

TEST_F(ConfigTest, SyntaxErrorsReportLineAndColumn) {
  const std::string path = (dir_ / "relay.toml").string();
  EXPECT_THAT(ErrorOf("[mysql]\nhost = \n"), HasSubstr(path + ":2:"));
  EXPECT_THAT(ErrorOf("[outbox_worker\n"), HasSubstr(path + ":1:"));
}

TEST_F(ConfigTest, MalformedDurationsNameTheKey) {
  for (const char* value : {"\"3 s\"", "\"abc\"", "\"1y\"", "3", "\"\""}) {
    const std::string error = ErrorOf(std::string("[outbox_worker]\npoll_interval = ") + value + "\n");
    EXPECT_THAT(error, HasSubstr(":2:17: outbox_worker.poll_interval: ")) << value;
  }
  EXPECT_THAT(ErrorOf("[tencent_im]\nusersig_ttl = \"1d\"\n"), HasSubstr("tencent_im.usersig_ttl"));
  EXPECT_THAT(ErrorOf("[hook]\nsync_publish_timeout = \"fast\"\n"),
              HasSubstr("hook.sync_publish_timeout"));
}

TEST_F(ConfigTest, WrongTypesAndBadValuesAreErrors) {
  EXPECT_THAT(ErrorOf("[outbox_worker]\nbatch_size = \"100\"\n"),
              HasSubstr("outbox_worker.batch_size: expected an integer"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\nenabled = \"yes\"\n"),
              HasSubstr("outbox_worker.enabled: expected true or false"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\nbatch_size = 1000000\n"),
              HasSubstr("outbox_worker.batch_size: must be at most 10000"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\nordering = \"room\"\n"), HasSubstr("outbox_worker.ordering"));
  EXPECT_THAT(ErrorOf("[mysql]\nport = 70000\n"), HasSubstr("mysql.port: must be 1..65535"));
  EXPECT_THAT(ErrorOf("[log]\nlevel = \"verbose\"\n"), HasSubstr("log.level"));
  EXPECT_THAT(ErrorOf("[log]\nformat = \"xml\"\n"), HasSubstr("log.format"));
  EXPECT_THAT(ErrorOf("[metrics]\nlisten = \"9464\"\n"), HasSubstr("metrics.listen"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nskip_event_types = [1]\n"),
              HasSubstr("tencent_im.skip_event_types"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nrequests_per_second = -1\n"),
              HasSubstr("tencent_im.requests_per_second"));
  EXPECT_THAT(ErrorOf("mysql = 3\n"), HasSubstr("mysql: expected a table"));
  // Every duration key has a maximum (core/config/duration_limits.h).
  EXPECT_THAT(ErrorOf("[hook]\nsync_publish_timeout = \"1000000h\"\n"),
              HasSubstr("hook.sync_publish_timeout: must be at most 30s, got 1000000h"));
  EXPECT_THAT(ErrorOf("[mysql]\nconnect_timeout = \"6m\"\n"),
              HasSubstr("mysql.connect_timeout: must be at most 5m"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\npoll_interval = \"301s\"\n"),
              HasSubstr("outbox_worker.poll_interval: must be at most 5m"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\npublish_timeout = \"61s\"\n"),
              HasSubstr("outbox_worker.publish_timeout: must be at most 1m"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\nlease = \"2h\"\n"),
              HasSubstr("outbox_worker.lease: must be at most 1h"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nusersig_ttl = \"721h\"\n"),
              HasSubstr("tencent_im.usersig_ttl: must be at most 720h"));
  EXPECT_THAT(ErrorOf("[tencent_im]\nbreaker_cooldown = \"61m\"\n"),
              HasSubstr("tencent_im.breaker_cooldown: must be at most 1h"));
  EXPECT_THAT(ErrorOf("[tencent_im.max_age_by_type]\nRoomGiftSent = \"169h\"\n"),
              HasSubstr("tencent_im.max_age_by_type.RoomGiftSent: must be at most 168h"));
  // The largest value of each key is accepted.
  EXPECT_TRUE(
      Load("[hook]\nsync_publish_timeout = \"30s\"\n[outbox_worker]\n"
           "poll_interval = \"5m\"\npublish_timeout = \"1m\"\nlease = \"1h\"\n"
           "[tencent_im]\nusersig_ttl = \"720h\"\nbreaker_cooldown = \"1h\"\n"));
  // TOML's nan and inf are numbers: a rate must be finite, whichever rate key it is.
  for (const char* key : {"requests_per_second", "app_requests_per_second"}) {
    for (const char* value : {"nan", "inf", "+inf", "-inf", "-nan"}) {
      EXPECT_THAT(ErrorOf(std::string("[tencent_im]\n") + key + " = " + value + "\n"),
                  HasSubstr(std::string("tencent_im.") + key + ": must be a finite number"))
          << key << " = " << value;
    }
  }
  EXPECT_THAT(ErrorOf("[tencent_im]\nusersig_ttl = \"10s\"\n"), HasSubstr("at least 1m"));
}

// docs/configuration.md states each duration key's default (as an empty file loads it) and its
// maximum (core/config/duration_limits.h) in one table.
TEST_F(ConfigTest, TheDocsStateEveryDurationsDefaultAndMaximum) {
  auto c = Load("");
  ASSERT_TRUE(c) << c.error().message;
  const std::map<std::string, std::string> defaults = {
      {"mysql.connect_timeout", core::FormatDuration(c->mysql.connect_timeout)},
      {"outbox_worker.poll_interval", core::FormatDuration(c->outbox_worker.poll_interval)},
      {"outbox_worker.publish_timeout", core::FormatDuration(c->outbox_worker.publish_timeout)},
      {"outbox_worker.lease", core::FormatDuration(c->outbox_worker.lease)},
      {"tencent_im.usersig_ttl", core::FormatDuration(c->tencent_im.usersig_ttl)},
      {"tencent_im.breaker_cooldown", core::FormatDuration(c->tencent_im.breaker_cooldown)},
      {"tencent_im.max_age_by_type.*", ""},
      {"hook.sync_publish_timeout", core::FormatDuration(c->hook.sync_publish_timeout)},
  };
  std::ifstream in(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/docs/configuration.md");
  std::stringstream docs;
  docs << in.rdbuf();
  for (const core::DurationLimit& limit : core::kDurationLimits) {
    ASSERT_EQ(defaults.count(limit.key), 1u) << limit.key;
    const std::string& value = defaults.at(limit.key);
    const std::string row = "| `" + std::string(limit.key) + "` | " +
                            (value.empty() ? "none (no expiry)" : "`\"" + value + "\"`") +
                            " | `\"" + core::FormatDuration(limit.max) + "\"` |";
    EXPECT_NE(docs.str().find(row), std::string::npos) << "docs/configuration.md lacks " << row;
  }
}

TEST_F(ConfigTest, LeaseMustHoldOneMessagePlusTheMarking) {
  // publish_timeout 3s (default) + the 2s margin: 3500ms gives every claim back unsent.
  EXPECT_THAT(ErrorOf("[outbox_worker]\nlease = \"3500ms\"\n"),
              HasSubstr(":2:9: outbox_worker.lease: 3500ms must be at least publish_timeout (3s) "
                        "+ 2s = 5s, so a claim holds one message and the marking of its results"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\npublish_timeout = \"5s\"\nlease = \"5s\"\n"),
              HasSubstr(":3:9: outbox_worker.lease: 5s must be at least publish_timeout (5s) + 2s"));
  // A publish_timeout the default lease cannot hold names the lease, at publish_timeout's place.
  EXPECT_THAT(ErrorOf("[outbox_worker]\npublish_timeout = \"29s\"\n"),
              HasSubstr(":2:19: outbox_worker.lease: 30s must be at least publish_timeout (29s)"));
  auto exact = Load("[outbox_worker]\npublish_timeout = \"1s\"\nlease = \"3s\"\n");
  ASSERT_TRUE(exact) << exact.error().message;
  EXPECT_EQ(exact->outbox_worker.lease, milliseconds(3000));
}

TEST_F(ConfigTest, RoomMinIntervalMustNotExceedPollInterval) {
  EXPECT_THAT(ErrorOf("[outbox_worker]\nroom_min_interval = \"2s\"\n"),
              HasSubstr(":2:21: outbox_worker.room_min_interval: 2s must not exceed "
                        "poll_interval (1s)"));
  // The default pace (25ms) above a shorter poll_interval names room_min_interval too.
  EXPECT_THAT(ErrorOf("[outbox_worker]\npoll_interval = \"20ms\"\n"),
              HasSubstr(":2:17: outbox_worker.room_min_interval: 25ms must not exceed "
                        "poll_interval (20ms)"));
  auto equal = Load("[outbox_worker]\npoll_interval = \"200ms\"\nroom_min_interval = \"200ms\"\n");
  ASSERT_TRUE(equal) << equal.error().message;
  EXPECT_EQ(equal->outbox_worker.room_min_interval, milliseconds(200));
}

TEST_F(ConfigTest, MaxInFlightMustNotExceedWhatThePublisherRunsAtOnce) {
  EXPECT_THAT(ErrorOf("[outbox_worker]\nmax_in_flight = 65\n"),
              HasSubstr(":2:17: outbox_worker.max_in_flight: 65 is above what the IM publisher "
                        "runs at once (64 requests): must be at most 64"));
  EXPECT_THAT(ErrorOf("[outbox_worker]\nmax_in_flight = 1024\n"),
              HasSubstr("outbox_worker.max_in_flight: 1024 is above"));
  auto most = Load("[outbox_worker]\nmax_in_flight = 64\n");
  ASSERT_TRUE(most) << most.error().message;
  EXPECT_EQ(most->outbox_worker.max_in_flight, kPublisherMaxInFlight);
}

TEST_F(ConfigTest, PlainHttpOnlyForLoopbackHosts) {
  for (const char* ok : {"http://127.0.0.1:18080", "http://127.1.2.3", "http://localhost:80/",
                         "http://LOCALHOST", "http://[::1]:8080", "https://example.com"}) {
    auto c = Load(std::string("[tencent_im]\nendpoint = \"") + ok + "\"\n");
    EXPECT_TRUE(c) << ok << ": " << (c ? "" : c.error().message);
  }
  for (const char* bad : {"http://example.com", "http://10.0.0.1:80", "http://128.0.0.1",
                          "http://localhost.evil.com", "ftp://127.0.0.1", "console.tim.qq.com",
                          "https://user:pw@example.com", "http://[::2]:80",
                          "https://console.tim.qq.com/?a=b"}) {
    EXPECT_THAT(ErrorOf(std::string("[tencent_im]\nendpoint = \"") + bad + "\"\n"),
                HasSubstr(":2:12: tencent_im.endpoint: "))
        << bad;
  }
}

TEST_F(ConfigTest, SecretsComeFromFilesNextToTheConfig) {
  Write("secrets/db", "db-secret\n");
  Write("secrets/tim", "tim-secret\r\n");
  auto c = Load(
      "[mysql]\npassword_file = \"secrets/db\"\n"
      "[tencent_im]\nsecret_key_file = \"secrets/tim\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.password, "db-secret");
  EXPECT_EQ(c->tencent_im.secret_key, "tim-secret");
}

TEST_F(ConfigTest, RelativeSecretFilesResolveInCredentialsDirectory) {
  Write("creds/mysql-password", "from-creds");
  Write("mysql-password", "next-to-config");
  ScopedEnv creds("CREDENTIALS_DIRECTORY", (dir_ / "creds").c_str());
  auto c = Load("[mysql]\npassword_file = \"mysql-password\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.password, "from-creds");
}

TEST_F(ConfigTest, AbsoluteSecretFilePathIsUsedAsIs) {
  const std::string path = Write("abs/key", "abs-key");
  ScopedEnv creds("CREDENTIALS_DIRECTORY", "/nonexistent");
  auto c = Load("[tencent_im]\nsecret_key_file = \"" + path + "\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->tencent_im.secret_key, "abs-key");
}

TEST_F(ConfigTest, EnvironmentOverridesSecretFiles) {
  Write("db", "from-file");
  ScopedEnv password("ROOM_OUTBOX_MYSQL_PASSWORD", "from-env");
  ScopedEnv key("ROOM_OUTBOX_TIM_SECRET_KEY", "key-from-env");
  auto c = Load("[mysql]\npassword_file = \"db\"\n");
  ASSERT_TRUE(c) << c.error().message;
  EXPECT_EQ(c->mysql.password, "from-env");
  EXPECT_EQ(c->tencent_im.secret_key, "key-from-env");
}

TEST_F(ConfigTest, UnreadableSecretFileNamesKeyAndPath) {
  const std::string error = ErrorOf("[tencent_im]\nsecret_key_file = \"missing-key\"\n");
  EXPECT_THAT(error, HasSubstr("tencent_im.secret_key_file: cannot read \""));
  EXPECT_THAT(error, HasSubstr((dir_ / "missing-key").string()));
}

TEST_F(ConfigTest, MissingConfigFileIsAnError) {
  auto c = LoadConfig((dir_ / "nope.toml").string());
  ASSERT_FALSE(c);
  EXPECT_EQ(c.error().code, ErrorCode::kNotFound);
  EXPECT_THAT(c.error().message, HasSubstr("nope.toml"));
}

TEST_F(ConfigTest, CheckRunnableNeedsAppIdAndSecretKey) {
  auto c = Load("[tencent_im]\nsdk_app_id = 1400012345\n");
  ASSERT_TRUE(c);
  Status s = CheckRunnable(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("ROOM_OUTBOX_TIM_SECRET_KEY"));
  c->tencent_im.secret_key = "k";
  EXPECT_TRUE(CheckRunnable(*c).ok());
  c->tencent_im.sdk_app_id = 0;
  EXPECT_THAT(CheckRunnable(*c).error().message, HasSubstr("tencent_im.sdk_app_id"));
}

TEST_F(ConfigTest, CheckRunnableRefusesTheTemplatesPlaceholderAppId) {
  auto c = Load("[tencent_im]\nsdk_app_id = 1400000000\n");
  ASSERT_TRUE(c);
  c->tencent_im.secret_key = "k";
  Status s = CheckRunnable(*c);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::kInvalidArgument);
  EXPECT_THAT(s.error().message, HasSubstr("tencent_im.sdk_app_id = 1400000000"));
  EXPECT_THAT(s.error().message, HasSubstr("placeholder"));
}

TEST_F(ConfigTest, RenderedConfigRedactsSecretsAndLoadsBack) {
  Write("db", "hunter2-db");
  ScopedEnv key("ROOM_OUTBOX_TIM_SECRET_KEY", "hunter2-tim");
  auto c = Load(R"(
node_id = "render \"me\""
[mysql]
password_file = "db"
[outbox_worker]
poll_interval = "2m"
ordering = "none"
[tencent_im]
sdk_app_id = 5
skip_event_types = ["A", "B"]
)");
  ASSERT_TRUE(c) << c.error().message;
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, Not(HasSubstr("hunter2")));
  EXPECT_THAT(text, HasSubstr("# password = \"<redacted>\""));
  EXPECT_THAT(text, HasSubstr("# secret_key = \"<redacted>\""));
  EXPECT_THAT(text, HasSubstr("poll_interval = \"2m\""));
  EXPECT_THAT(text, HasSubstr("retry_strategy = \"fixed_interval\""));

  auto back = LoadConfig(Write("rendered.toml", text));
  ASSERT_TRUE(back) << back.error().message << "\n" << text;
  EXPECT_EQ(back->node_id, "render \"me\"");
  EXPECT_EQ(back->outbox_worker.poll_interval, milliseconds(120000));
  EXPECT_EQ(back->outbox_worker.ordering, Ordering::kNone);
  EXPECT_EQ(back->tencent_im.skip_event_types, (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(back->mysql.password, "hunter2-db");
  // Identical but for the first line, which names the file.
  const std::string again = RenderEffectiveConfig(*back);
  EXPECT_EQ(again.substr(again.find('\n')), text.substr(text.find('\n')));
}

TEST_F(ConfigTest, RenderedConfigShowsUnsetSecrets) {
  auto c = Load("");
  ASSERT_TRUE(c);
  const std::string text = RenderEffectiveConfig(*c);
  EXPECT_THAT(text, HasSubstr("# password = \"<unset>\""));
  EXPECT_THAT(text, HasSubstr("# secret_key = \"<unset>\""));
}

TEST_F(ConfigTest, ShippedConfigsLoadAndCarryTheRequiredAndRecommendedValues) {
  Write("creds/mysql-password", "pw");
  Write("creds/tim-secret-key", "key");
  ScopedEnv creds("CREDENTIALS_DIRECTORY", (dir_ / "creds").c_str());
  ScopedEnv key("ROOM_OUTBOX_TIM_SECRET_KEY", "local-key");
  for (const char* name : {"relay.toml", "relay.docker.toml", "relay.tencent.example.toml"}) {
    const std::string path = std::string(ROOM_OUTBOX_SOURCE_DIR) + "/conf/" + name;
    auto c = LoadConfig(path);
    ASSERT_TRUE(c) << name << ": " << c.error().message;
    // The templates for the real IM carry the placeholder app id, which stops them running as
    // shipped; the local one names the stand-in's id.
    Status runnable = CheckRunnable(*c);
    if (std::string(name) == "relay.toml") {
      EXPECT_TRUE(runnable.ok()) << name << ": " << runnable.error().message;
    } else {
      ASSERT_FALSE(runnable.ok()) << name;
      EXPECT_THAT(runnable.error().message, HasSubstr("placeholder")) << name;
    }
    const WorkerConfig& w = c->outbox_worker;
    EXPECT_TRUE(w.enabled) << name;
    EXPECT_EQ(w.poll_interval, milliseconds(1000)) << name;
    EXPECT_EQ(w.batch_size, 100u) << name;
    EXPECT_EQ(w.publish_timeout, milliseconds(5000)) << name << ": the recommended value";
    EXPECT_EQ(c->tencent_im.app_requests_per_second, 200) << name;
    EXPECT_EQ(w.retry_strategy, "fixed_interval") << name;
  }
  auto docker = LoadConfig(std::string(ROOM_OUTBOX_SOURCE_DIR) + "/conf/relay.docker.toml");
  ASSERT_TRUE(docker);
  EXPECT_EQ(docker->mysql.host, "mariadb");
  EXPECT_EQ(docker->mysql.password, "pw");
  EXPECT_EQ(docker->tencent_im.endpoint.rfind("https://", 0), 0u);
}

}  // namespace
}  // namespace room_outbox::relay
