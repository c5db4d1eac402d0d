// ParseMessageEvents: the events the IM stand-in reads from one message's MsgContent, single form
// and RoomEventBatch form, and the malformed packs it refuses.
#include "support/fake_im_message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/envelope_codec.h"

namespace room_outbox::testing {
namespace {

std::string EnvelopeJson(const std::string& id, const std::string& room, int64_t seq) {
  Envelope e;
  e.event_id = id;
  e.event_type = "RoomGiftSent";
  e.room_id = room;
  e.room_seq = seq;
  e.command_id = "cmd-" + id;
  e.request_id = "req-" + id;
  e.node_id = "node-a";
  e.occurred_at_ms = 1700000000000;
  e.payload = R"({"gift":"rose"})";
  auto text = core::EncodeEnvelope(e);
  EXPECT_TRUE(text) << text.error().message;
  return text ? *text : "";
}

std::string Batch(const std::vector<std::string>& envelopes) {
  std::string data = R"({"events":[)";
  for (size_t i = 0; i < envelopes.size(); ++i) data += (i > 0 ? "," : "") + envelopes[i];
  return data + "]}";
}

std::vector<std::string> Ids(const std::vector<FakeImEvent>& events) {
  std::vector<std::string> ids;
  for (const FakeImEvent& e : events) ids.push_back(e.event_id);
  return ids;
}

TEST(FakeImMessageTest, ABatchOfThreeIsThreeEventsInOrder) {
  const std::string data = Batch({EnvelopeJson("e1", "r1", 7), EnvelopeJson("e2", "r1", 7),
                                  EnvelopeJson("e3", "r1", 8)});
  std::vector<FakeImEvent> events;
  EXPECT_EQ(ParseMessageEvents(data, "RoomEventBatch", "e1", &events), std::nullopt);
  EXPECT_EQ(Ids(events), (std::vector<std::string>{"e1", "e2", "e3"}));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].room_id, "r1");
  EXPECT_EQ(events[2].room_seq, 8);
}

TEST(FakeImMessageTest, TheSingleFormIsOneEvent) {
  std::vector<FakeImEvent> events;
  EXPECT_EQ(ParseMessageEvents(EnvelopeJson("e1", "r1", 1), "RoomGiftSent", "e1", &events),
            std::nullopt);
  EXPECT_EQ(Ids(events), (std::vector<std::string>{"e1"}));
}

TEST(FakeImMessageTest, MalformedBatchesAreRefusedWithTheirReason) {
  const std::string a = EnvelopeJson("e1", "r1", 1);
  const std::string b = EnvelopeJson("e2", "r1", 2);
  struct Case {
    std::string data, ext, reason;
  };
  const std::vector<Case> cases = {
      {R"({"events":[)", "e1", "is not a JSON object"},
      {R"({"evts":[]})", "e1", "\"events\" missing or not an array"},
      {Batch({a}), "e1", "has 1 envelopes"},
      {Batch({a, "17"}), "e1", "events[1] is not an envelope object"},
      {Batch({a, R"({"event_id":"e2"})"}), "e1", "events[1]: "},
      {Batch({a, EnvelopeJson("e2", "r2", 2)}), "e1", "not the next event of room r1"},
      {Batch({b, a}), "e2", "not the next event of room r1"},
      {Batch({a, b}), "e2", "Ext is not the first event's event_id"},
  };
  for (const Case& c : cases) {
    std::vector<FakeImEvent> events;
    auto why = ParseMessageEvents(c.data, "RoomEventBatch", c.ext, &events);
    ASSERT_TRUE(why.has_value()) << c.data;
    EXPECT_NE(why->find(c.reason), std::string::npos) << *why;
    EXPECT_TRUE(events.empty()) << c.data;
  }
}

TEST(FakeImMessageTest, TheSingleFormStillChecksDescAndExt) {
  std::vector<FakeImEvent> events;
  auto why = ParseMessageEvents(EnvelopeJson("e1", "r1", 1), "RoomGiftSent", "e9", &events);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("Desc/Ext"), std::string::npos) << *why;
  EXPECT_TRUE(events.empty());
}

}  // namespace
}  // namespace room_outbox::testing
