#include "telemetry/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/mysql/statement_count.h"

namespace room_outbox::relay {
namespace {

using ::testing::HasSubstr;

TEST(MetricsTest, RendersEveryMetricOfTheSeed) {
  Metrics m;
  m.AddPublishSuccess(3);
  m.AddPublishFailure();
  m.SetPending(12, 3456);
  m.SetRoomsHeldBack(2);
  m.AddRound(false);
  m.AddRound(true);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text,
              HasSubstr("# TYPE room_outbox_pending_total gauge\nroom_outbox_pending_total 12\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_oldest_pending_age_ms 3456\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_publish_success_total counter\n"
                              "room_outbox_publish_success_total 3\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_publish_failure_total 1\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_rooms_held_back 2\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_rounds_total 2\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_round_errors_total 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_publish_latency_ms histogram\n"));
}

// rooms_waiting comes from the same Stats read as the pending gauges: NaN until that read.
TEST(MetricsTest, RoomsWaitingIsNaNUntilTheFirstStatsRead) {
  Metrics m;
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("\nroom_outbox_rooms_waiting NaN\n"));
  m.SetRoomsWaiting(4);
  m.SetPending(12, 3456);
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("# TYPE room_outbox_rooms_waiting gauge\n"
                                              "room_outbox_rooms_waiting 4\n"));
}

TEST(MetricsTest, LatencyHistogramIsCumulative) {
  Metrics m;
  m.ObservePublishLatency(3);      // <= 5
  m.ObservePublishLatency(5);      // <= 5 (bounds are inclusive)
  m.ObservePublishLatency(40);     // <= 50
  m.ObservePublishLatency(60000);  // +Inf only
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_bucket{le=\"5\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_bucket{le=\"25\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_bucket{le=\"50\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_bucket{le=\"30000\"} 3\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_sum 60048\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_publish_latency_ms_count 4\n"));
}

// The app budget's gauges: NaN while the process shares no budget or cannot read the table.
// Accepted messages, the events each carried (a histogram whose count is the messages), and the
// rooms' refusals, apart from every other failure.
TEST(MetricsTest, MessagesEventsPerMessageAndRoomRefusals) {
  relay::Metrics m;
  m.AddMessageDelivered(1);
  m.AddMessageDelivered(1);
  m.AddMessageDelivered(20);
  m.AddMessageDelivered(101);
  m.AddRoomRefusal();
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_publish_messages_total counter\n"
                              "room_outbox_publish_messages_total 4\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_room_refusals_total counter\n"
                              "room_outbox_room_refusals_total 1\n"));
  const std::string h = "room_outbox_publish_events_per_message";
  EXPECT_THAT(text, HasSubstr("# TYPE " + h + " histogram\n"));
  EXPECT_THAT(text, HasSubstr(h + "_bucket{le=\"1\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(h + "_bucket{le=\"10\"} 2\n"));
  EXPECT_THAT(text, HasSubstr(h + "_bucket{le=\"20\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(h + "_bucket{le=\"100\"} 3\n"));
  EXPECT_THAT(text, HasSubstr(h + "_bucket{le=\"+Inf\"} 4\n"));
  EXPECT_THAT(text, HasSubstr(h + "_sum 123\n" + h + "_count 4\n"));
}

TEST(MetricsTest, ImBudgetShareAndMembers) {
  Metrics m;
  std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_im_budget_share_requests_per_second NaN\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_im_budget_members NaN\n"));
  m.SetImBudgetShare(66.5, 3);
  text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_im_budget_share_requests_per_second gauge\n"
                              "room_outbox_im_budget_share_requests_per_second 66.500\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_im_budget_members 3\n"));
  m.SetImBudgetShare(50, -1);
  text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_im_budget_share_requests_per_second 50\n"));
  EXPECT_THAT(text, HasSubstr("\nroom_outbox_im_budget_members NaN\n"));
}

// The process's statement count, as /metrics shows it: what every connection of the process sent.
TEST(MetricsTest, DbStatementsTotalIsTheProcessCount) {
  Metrics m;
  core::CountStatementSent();
  const uint64_t sent = core::StatementsSent();
  EXPECT_THAT(m.RenderPrometheus(), HasSubstr("# TYPE room_outbox_db_statements_total counter\n"
                                              "room_outbox_db_statements_total " +
                                              std::to_string(sent) + "\n"));
  core::CountStatementSent();
  EXPECT_THAT(m.RenderPrometheus(),
              HasSubstr("\nroom_outbox_db_statements_total " + std::to_string(sent + 1) + "\n"));
}

// room_outbox_expired_total{event_type}: one series per declared type (max_age_by_type), none
// for any other type, no family without declared types.
TEST(MetricsTest, ExpiredTotalHasOneSeriesPerDeclaredType) {
  Metrics m;
  EXPECT_THAT(m.RenderPrometheus(), ::testing::Not(HasSubstr("room_outbox_expired_total")));
  m.DeclareExpiredTypes(std::map<std::string, int>{{"RoomGiftSent", 0}, {"RoomLike", 0}});
  m.AddExpired("RoomGiftSent");
  m.AddExpired("RoomGiftSent");
  m.AddExpired("NotDeclared");
  EXPECT_EQ(m.expired("RoomGiftSent"), 2u);
  EXPECT_EQ(m.expired("NotDeclared"), 0u);
  const std::string text = m.RenderPrometheus();
  EXPECT_THAT(text, HasSubstr("# TYPE room_outbox_expired_total counter\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_expired_total{event_type=\"RoomGiftSent\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("room_outbox_expired_total{event_type=\"RoomLike\"} 0\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("NotDeclared")));
}

}  // namespace
}  // namespace room_outbox::relay
