// Every PromQL query the project ships names only metrics the relay or the hook exports (read from
// the code that renders them, support/exported_metrics.h): the Grafana dashboard
// (conf/grafana/room-outbox.json, also valid JSON whose queries promtool parses), the alert rules
// (conf/alerts.yml) and the runbook's ```promql blocks. Every alert has a runbook section of its
// name. The last tests show the checks failing on a planted name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/exported_metrics.h"
#include "support/shipped_text.h"

namespace room_outbox::testing {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using Queries = std::vector<std::pair<std::string, std::string>>;

const char kDashboard[] = "conf/grafana/room-outbox.json";

// Every "expr" of the dashboard, named by its panel's title.
void CollectQueries(const nlohmann::json& node, const std::string& panel, Queries& out) {
  if (node.is_object()) {
    const std::string title = node.contains("title") && node["title"].is_string()
                                  ? node["title"].get<std::string>()
                                  : panel;
    for (const auto& [key, value] : node.items()) {
      if (key == "expr" && value.is_string()) {
        out.emplace_back(std::string(kDashboard) + " \"" + title + "\"", value.get<std::string>());
      } else {
        CollectQueries(value, title, out);
      }
    }
  } else if (node.is_array()) {
    for (const auto& item : node) CollectQueries(item, panel, out);
  }
}

Queries DashboardQueries() {
  const nlohmann::json dashboard =
      nlohmann::json::parse(ReadSourceFile(kDashboard), nullptr, /*allow_exceptions=*/false);
  Queries queries;
  CollectQueries(dashboard, "", queries);
  return queries;
}

Queries AlertQueries() {
  Queries queries;
  for (const auto& [alert, expr] : AlertRules(ReadSourceFile("conf/alerts.yml"))) {
    queries.emplace_back("conf/alerts.yml " + alert, expr);
  }
  return queries;
}

Queries RunbookQueries() {
  Queries queries;
  std::string block;
  int start = 0;
  for (const TextLine& line : LinesOf("docs/RUNBOOK.md")) {
    if (line.fenced && line.fence_info == "promql") {
      if (block.empty()) start = line.number;
      block += line.text + "\n";
    } else if (!block.empty()) {
      // One query per line of a block; "#" starts a comment.
      std::istringstream in(block);
      int n = start;
      for (std::string q; std::getline(in, q); ++n) {
        q = q.substr(0, q.find('#'));
        if (q.find_first_not_of(' ') != std::string::npos) {
          queries.emplace_back("docs/RUNBOOK.md:" + std::to_string(n), q);
        }
      }
      block.clear();
    }
  }
  return queries;
}

TEST(PromqlMetricsTest, TheExportedFamiliesComeFromBothRenderers) {
  const auto families = ExportedMetricFamilies();
  EXPECT_EQ(families.at("room_outbox_pending_total"), "gauge");
  EXPECT_EQ(families.at("room_outbox_publish_latency_ms"), "histogram");
  EXPECT_EQ(families.at("room_outbox_hook_commits_total"), "counter");
  EXPECT_THAT(ExportedSeriesNames(), Contains("room_outbox_hook_commit_duration_seconds_bucket"));
  EXPECT_GT(families.size(), 40u);
}

TEST(PromqlMetricsTest, MetricNamesAreReadFromAQuery) {
  EXPECT_THAT(
      PromqlMetricNames(
          "sum without (instance, reason) (rate(room_outbox_publish_failures_by_reason_total"
          "{job=\"outbox-relay\",reason=~\"timeout|http\"}[1m])) / on (job) "
          "histogram_quantile(0.99, sum by (le) (rate(a_bucket[$__rate_interval]))) > 0.5 "
          "and up == 0 or max(b) offset 5m"),
      ElementsAre("room_outbox_publish_failures_by_reason_total", "a_bucket", "up", "b"));
  EXPECT_THAT(PromqlMetricNames("-deriv(max(x)[10m:1m]) > 1e3"), ElementsAre("x"));
}

TEST(PromqlMetricsTest, TheDashboardIsValidJsonWithQueries) {
  const nlohmann::json dashboard =
      nlohmann::json::parse(ReadSourceFile(kDashboard), nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(dashboard.is_discarded()) << kDashboard << " is not valid JSON";
  EXPECT_EQ(dashboard["uid"], "room-outbox");
  ASSERT_TRUE(dashboard["panels"].is_array());
  EXPECT_GE(DashboardQueries().size(), 20u);
}

TEST(PromqlMetricsTest, EveryDashboardQueryNamesExportedMetrics) {
  EXPECT_THAT(UnknownMetricsIn(DashboardQueries()), IsEmpty());
}

TEST(PromqlMetricsTest, EveryAlertExpressionNamesExportedMetrics) {
  const Queries alerts = AlertQueries();
  ASSERT_GE(alerts.size(), 15u);
  EXPECT_THAT(UnknownMetricsIn(alerts), IsEmpty());
}

TEST(PromqlMetricsTest, EveryRunbookQueryNamesExportedMetrics) {
  const Queries queries = RunbookQueries();
  ASSERT_GE(queries.size(), 3u) << "docs/RUNBOOK.md has no ```promql block";
  EXPECT_THAT(UnknownMetricsIn(queries), IsEmpty());
}

// promtool parses every query of the dashboard and the runbook (Grafana's $__rate_interval as 1m),
// written as recording rules.
TEST(PromqlMetricsTest, PromtoolParsesTheDashboardAndRunbookQueries) {
  char path[] = "/tmp/promql-queries-XXXXXX.yml";
  const int fd = mkstemps(path, 4);
  ASSERT_GE(fd, 0);
  close(fd);
  {
    std::ofstream rules(path);
    rules << "groups:\n  - name: queries\n    rules:\n";
    int n = 0;
    Queries queries = DashboardQueries();
    const Queries runbook = RunbookQueries();
    queries.insert(queries.end(), runbook.begin(), runbook.end());
    for (const auto& [where, expr] : queries) {
      const std::string q = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "1m");
      rules << "      - record: query:" << ++n << "\n        expr: " << nlohmann::json(q).dump()
            << "\n";
    }
  }
  FILE* pipe = popen(("promtool check rules " + std::string(path) + " 2>&1").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buffer[512];
  while (fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  const int status = pclose(pipe);
  unlink(path);
  EXPECT_EQ(status, 0) << output;
}

TEST(PromqlMetricsTest, EveryAlertHasARunbookSectionOfItsName) {
  std::set<std::string> headings;
  for (const TextLine& line : LinesOf("docs/RUNBOOK.md")) {
    if (!line.fenced && line.text.starts_with("#")) {
      headings.insert(line.text.substr(line.text.find_first_not_of("# ")));
    }
  }
  for (const auto& [alert, expr] : AlertRules(ReadSourceFile("conf/alerts.yml"))) {
    EXPECT_THAT(headings, Contains(alert)) << "docs/RUNBOOK.md has no section " << alert;
  }
}

TEST(PromqlMetricsTest, TheChecksFailOnAPlantedName) {
  EXPECT_THAT(UnknownMetricsIn({{"planted", "rate(room_outbox_publish_sucess_total[1m])"}}),
              ElementsAre("planted: room_outbox_publish_sucess_total is not a metric the relay or "
                          "the hook exports"));
  EXPECT_THAT(UnknownMetricsIn({{"planted", "sum(rate(room_outbox_rows_arrived_total[1m]))"}}),
              Not(IsEmpty()));
  EXPECT_THAT(UnknownMetricsIn({{"planted", "vector(1)"}}),
              ElementsAre("planted: selects no metric: vector(1)"));
  EXPECT_THAT(UnknownMetricsIn({{"fine", "max(room_outbox_pending_total) and up"}}), IsEmpty());
}

}  // namespace
}  // namespace room_outbox::testing
