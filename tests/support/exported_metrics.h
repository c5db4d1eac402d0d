// What the relay and the hook export, read from the code that renders it: the families of the
// relay's /metrics (Metrics::RenderPrometheus, every optional family turned on) and of the
// hook's text (HookMetricsText), and the metric names a PromQL expression selects. The checks
// of the docs, the alert rules and the dashboard compare against these, never against a list.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace room_outbox::testing {

// Every family the relay or the hook exports: name -> type ("counter", "gauge", "histogram"),
// from the "# TYPE" lines of their rendered text.
std::map<std::string, std::string> ExportedMetricFamilies();

// The series names a query may select: each family, and a histogram's _bucket, _sum and _count.
std::set<std::string> ExportedSeriesNames();

// The metric names `expr` (PromQL) selects: its identifiers that are not functions (followed by
// "("), keywords, aggregation modifiers' label lists, label matchers, durations, strings,
// numbers or Grafana variables ($name, ${name}). Prometheus' own `up` included.
std::vector<std::string> PromqlMetricNames(std::string_view expr);

// Each of `exprs` (a name for the report -> PromQL) against ExportedSeriesNames() and `up`: one
// line per name that is neither ("<where>: room_outbox_foo is not a metric the relay or the hook
// exports"); a line for an expression that selects no metric at all.
std::vector<std::string> UnknownMetricsIn(
    const std::vector<std::pair<std::string, std::string>>& exprs);

}  // namespace room_outbox::testing
