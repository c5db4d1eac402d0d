#include "support/fake_im_message.h"

#include <nlohmann/json.hpp>

#include "core/envelope_codec.h"
#include "core/tencent/im_request.h"
#include "room_outbox/options.h"

namespace room_outbox::testing {
namespace {

// One envelope text as a FakeImEvent; `where` names it in the error.
std::optional<std::string> DecodeEvent(const std::string& text, const std::string& where,
                                       FakeImEvent* out) {
  auto envelope = core::DecodeEnvelope(text);
  if (!envelope) {
    return where + ": " + envelope.error().message;
  }
  *out =
      FakeImEvent{envelope->event_id, envelope->event_type, envelope->room_id, envelope->room_seq};
  return std::nullopt;
}

std::optional<std::string> ParseBatch(const std::string& data, const std::string& ext,
                                      std::vector<FakeImEvent>* events) {
  const std::string where = "body: RoomEventBatch Data";
  nlohmann::json doc = nlohmann::json::parse(data, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return where + " is not a JSON object";
  }
  auto list = doc.find("events");
  if (list == doc.end() || !list->is_array()) {
    return where + ": \"events\" missing or not an array";
  }
  if (list->size() < 2 || list->size() > kMaxPackEvents) {
    return where + ": \"events\" has " + std::to_string(list->size()) + " envelopes, not 2.." +
           std::to_string(kMaxPackEvents) + " (one event is sent in the single form)";
  }
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string at = where + ".events[" + std::to_string(i) + "]";
    if (!(*list)[i].is_object()) {
      return at + " is not an envelope object";
    }
    FakeImEvent event;
    if (auto why = DecodeEvent((*list)[i].dump(), at, &event)) {
      return why;
    }
    if (!events->empty() &&
        (event.room_id != events->front().room_id || event.room_seq < events->back().room_seq)) {
      return at + ": not the next event of room " + events->front().room_id + " in room order";
    }
    events->push_back(std::move(event));
  }
  if (ext != events->front().event_id) {
    return "body: RoomEventBatch Ext is not the first event's event_id";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> ParseMessageEvents(const std::string& data, const std::string& desc,
                                              const std::string& ext,
                                              std::vector<FakeImEvent>* events) {
  events->clear();
  std::optional<std::string> why;
  if (desc == core::kRoomEventBatchDesc) {
    why = ParseBatch(data, ext, events);
  } else {
    FakeImEvent event;
    why = DecodeEvent(data, "body: MsgContent.Data", &event);
    if (!why && (desc != event.event_type || ext != event.event_id)) {
      why = "body: Desc/Ext do not match the envelope's event_type/event_id";
    }
    if (!why) events->push_back(std::move(event));
  }
  if (why) events->clear();
  return why;
}

std::vector<std::string> EventIds(const std::vector<FakeImEvent>& events) {
  std::vector<std::string> ids;
  ids.reserve(events.size());
  for (const FakeImEvent& event : events) ids.push_back(event.event_id);
  return ids;
}

}  // namespace room_outbox::testing
