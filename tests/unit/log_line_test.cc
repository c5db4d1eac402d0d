#include "telemetry/log_line.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(LogLineTest, TextQuotesValuesThatNeedIt) {
  LogLine line("outbox event failed");
  line.Add("event_id", "evt-1")
      .Add("retry_count", int64_t{3})
      .Add("error", "retryable: http 503")
      .Add("empty", "")
      .Add("quote", "a\"b")
      .Add("eq", "k=v")
      .Add("newline", "a\nb");
  EXPECT_EQ(line.Render(LogFormat::kText),
            "outbox event failed event_id=evt-1 retry_count=3 error=\"retryable: http 503\" "
            "empty=\"\" quote=\"a\\\"b\" eq=\"k=v\" newline=\"a\\nb\"");
}

TEST(LogLineTest, JsonKeepsFieldOrderAndTypes) {
  LogLine line("outbox event published");
  line.Add("event_id", "evt-1").Add("retry_count", int64_t{0}).Add("error", "").Add("stopped", true);
  const std::string text = line.Render(LogFormat::kJson, {{"level", "debug"}});
  EXPECT_EQ(text,
            R"({"level":"debug","msg":"outbox event published","event_id":"evt-1",)"
            R"("retry_count":0,"error":"","stopped":true})");
  EXPECT_EQ(line.Render(LogFormat::kText),
            "outbox event published event_id=evt-1 retry_count=0 error=\"\" stopped=true");
  EXPECT_TRUE(nlohmann::json::accept(text)) << text;
}

TEST(LogLineTest, JsonSurvivesInvalidUtf8) {
  LogLine line("m");
  line.Add("error", std::string("bad \xff byte"));
  const std::string text = line.Render(LogFormat::kJson);
  EXPECT_TRUE(nlohmann::json::accept(text)) << text;
}

TEST(LogLineTest, OutboxEventLineHasTheSeedFieldsInOrder) {
  OutboxEventFields f;
  f.node_id = "node-1";
  f.event_id = "evt-9";
  f.event_type = "RoomUserJoined";
  f.room_id = "room 1";
  f.retry_count = 2;
  f.status = "pending";
  f.error = "unknown: timeout after 3000ms";
  EXPECT_EQ(OutboxEventLine("outbox event failed", f).Render(LogFormat::kText),
            "outbox event failed worker=room_outbox node_id=node-1 event_id=evt-9 "
            "event_type=RoomUserJoined room_id=\"room 1\" retry_count=2 status=pending "
            "error=\"unknown: timeout after 3000ms\"");
  auto j = nlohmann::json::parse(OutboxEventLine("m", f).Render(LogFormat::kJson));
  EXPECT_EQ(j["worker"], "room_outbox");
  EXPECT_EQ(j["retry_count"], 2);
  EXPECT_EQ(j["status"], "pending");
}

TEST(LogLineTest, LoggerWritesLevelAndRespectsTheThreshold) {
  std::ostringstream out;
  auto logger = MakeStreamLogger(out, LogFormat::kText, spdlog::level::info);
  logger->Debug(LogLine("hidden"));
  logger->Warn(LogLine("shown").Add("k", "v"));
  EXPECT_THAT(out.str(), Not(HasSubstr("hidden")));
  EXPECT_THAT(out.str(), HasSubstr("warning shown k=v"));
}

TEST(LogLineTest, JsonLoggerWritesOneObjectPerLine) {
  std::ostringstream out;
  auto logger = MakeStreamLogger(out, LogFormat::kJson, spdlog::level::trace);
  logger->Info(LogLine("relay started").Add("version", "0.1.0"));
  logger->Error(LogLine("claim failed").Add("error", "x"));
  std::istringstream lines(out.str());
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_TRUE(j.contains("level"));
    EXPECT_TRUE(j.contains("msg"));
    ++count;
  }
  EXPECT_EQ(count, 2);
  EXPECT_THAT(out.str(), HasSubstr(R"("level":"error","msg":"claim failed")"));
}

TEST(LogLineTest, ParseLogLevelMapsTheConfigNames) {
  EXPECT_EQ(ParseLogLevel("trace"), spdlog::level::trace);
  EXPECT_EQ(ParseLogLevel("debug"), spdlog::level::debug);
  EXPECT_EQ(ParseLogLevel("info"), spdlog::level::info);
  EXPECT_EQ(ParseLogLevel("warn"), spdlog::level::warn);
  EXPECT_EQ(ParseLogLevel("error"), spdlog::level::err);
}

}  // namespace
}  // namespace room_outbox::relay
