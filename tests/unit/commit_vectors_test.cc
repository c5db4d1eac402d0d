// The checks and rows at commit against hook/gosql/testdata/commit_vectors.json, the test
// vectors the pure-Go package (hook/gosql) reads too: CheckCommand, then PrepareCommit (each
// event's envelope, its status and the size of its IM request body) must give each vector's rows
// or its refusal, message for message. A change to either side that the other lacks fails here
// or in `go test` of hook/gosql.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commit_checks.h"
#include "commit_prepare.h"
#include "core/json_writer.h"
#include "mock_publisher.h"

namespace room_outbox {
namespace {

using nlohmann::json;
using ::testing::NiceMock;

// A string of the file: JSON text, {"hex": H}, {"repeat": S, "times": N} or {"parts": [...]}.
std::string Text(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (value.contains("hex")) {
    const std::string hex = value["hex"].get<std::string>();
    std::string bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) {
      bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    }
    return bytes;
  }
  if (value.contains("repeat")) {
    std::string out;
    for (int i = 0; i < value["times"].get<int>(); ++i) out += value["repeat"].get<std::string>();
    return out;
  }
  std::string out;
  for (const json& part : value["parts"]) out += Text(part);
  return out;
}

json LoadVectors() {
  std::ifstream in(ROOM_OUTBOX_SOURCE_DIR "/hook/gosql/testdata/commit_vectors.json");
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

HookOptions OptionsOf(const json& o) {
  HookOptions options;
  options.node_id = Text(o.at("node_id"));
  options.tencent_im.group_id_prefix = Text(o.at("group_id_prefix"));
  if (o.contains("skip_event_types")) {
    options.tencent_im.skip_event_types = o["skip_event_types"].get<std::vector<std::string>>();
  }
  if (o.contains("max_body_bytes")) {
    options.tencent_im.max_body_bytes = o["max_body_bytes"].get<size_t>();
  }
  if (o.contains("msg_priority")) {
    options.tencent_im.msg_priority = *ParseMsgPriority(o["msg_priority"].get<std::string>());
  }
  if (o.contains("priority_by_type")) {
    for (const auto& [type, name] : o["priority_by_type"].items()) {
      options.tencent_im.priority_by_type[type] = *ParseMsgPriority(name.get<std::string>());
    }
  }
  return options;
}

Command CommandOf(const json& c) {
  return Command{Text(c["command_id"]), Text(c["room_id"]),           Text(c["command_type"]),
                 Text(c["request_id"]), c["room_seq"].get<int64_t>(), Text(c["payload"])};
}

std::vector<Event> EventsOf(const json& events) {
  std::vector<Event> out;
  for (const json& e : events) {
    // The Go package writes "" as "{}"; the C++ API takes the payload as given.
    std::string payload = Text(e["payload"]);
    out.push_back(Event{Text(e["event_id"]), Text(e["event_type"]), e["room_seq"].get<int64_t>(),
                        e["occurred_at_ms"].get<int64_t>(), payload.empty() ? "{}" : payload});
  }
  return out;
}

// CheckCommand, then PrepareCommit, as Commit runs them before BEGIN.
core::Result<internal::PreparedCommit> Prepare(const HookOptions& options, const Command& command,
                                               const std::vector<Event>& events) {
  if (Status s = internal::CheckCommand(command, events, options.tencent_im.group_id_prefix,
                                        options.tencent_im.skip_event_types);
      !s.ok()) {
    return core::Fail(s.error());
  }
  NiceMock<testing::MockPublisher> publisher;
  const auto& skip = options.tencent_im.skip_event_types;
  ON_CALL(publisher, Sends).WillByDefault([&skip](std::string_view type) {
    return std::find(skip.begin(), skip.end(), type) == skip.end();
  });
  internal::CommitScratch scratch;
  return internal::PrepareCommit(options, publisher, command, events, /*now_ms=*/1, scratch);
}

void ExpectRefusal(const json& v, const core::Result<internal::PreparedCommit>& prepared) {
  ASSERT_FALSE(prepared) << "wanted a refusal";
  EXPECT_EQ(prepared.error().code, ErrorCode::kInvalidArgument);
  if (v.contains("error")) {
    EXPECT_EQ(prepared.error().message, v["error"].get<std::string>());
  } else {
    EXPECT_EQ(prepared.error().message.rfind(v["error_prefix"].get<std::string>(), 0), 0u)
        << prepared.error().message;
  }
}

void ExpectRows(const json& v, const HookOptions& options, const Command& command,
                const internal::PreparedCommit& prepared) {
  const json& rows = v["rows"];
  ASSERT_EQ(prepared.request.rows.size(), rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const internal::NewOutboxRow& row = prepared.request.rows[i];
    EXPECT_EQ(row.envelope, Text(rows[i]["envelope"])) << "row " << i;
    EXPECT_EQ(row.published ? "published" : "pending", rows[i]["status"].get<std::string>());
    if (row.published) continue;
    core::JsonWriter body;
    core::EnvelopeFields fields;  // what the body repeats of the envelope
    fields.event_id = row.event_id;
    fields.event_type = row.event_type;
    fields.room_id = command.room_id;
    ASSERT_TRUE(internal::CheckBodySize(options.tencent_im, fields, row.envelope, body).ok());
    EXPECT_EQ(body.text().size(), rows[i]["body_bytes"].get<size_t>()) << "row " << i;
  }
}

TEST(CommitVectorsTest, SharedVectorsGiveTheirRowsOrRefusals) {
  const json doc = LoadVectors();
  ASSERT_GT(doc["vectors"].size(), 0u);
  for (const json& v : doc["vectors"]) {
    SCOPED_TRACE(v["name"].get<std::string>());
    const HookOptions options = OptionsOf(v["options"]);
    const Command command = CommandOf(v["command"]);
    const auto prepared = Prepare(options, command, EventsOf(v["events"]));
    if (v.contains("rows")) {
      ASSERT_TRUE(prepared) << prepared.error().message;
      ExpectRows(v, options, command, *prepared);
    } else {
      ExpectRefusal(v, prepared);
    }
  }
}

}  // namespace
}  // namespace room_outbox
