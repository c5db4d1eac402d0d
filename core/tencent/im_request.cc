#include "core/tencent/im_request.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/envelope_codec.h"

namespace room_outbox::core {
namespace {

// RFC 3986 unreserved characters pass; every other byte becomes %XX.
std::string PercentEncode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.' || c == '~';
    if (unreserved) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0x0F];
    }
  }
  return out;
}

constexpr std::string_view kBatchOpen = R"({"events":[)";
constexpr std::string_view kBatchClose = "]}";

// Data = {"events":[e1,e2,...]} as one JSON string, then Desc. The events are JSON texts: their
// concatenation is written as a string by one serializer call.
void WriteBatchData(JsonWriter& writer, std::span<const std::string_view> batch) {
  thread_local std::string data;
  data.assign(kBatchOpen);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (i > 0) data.push_back(',');
    data.append(batch[i]);
  }
  data.append(kBatchClose);
  writer.String(data);
  writer.Raw(R"(,"Desc":)");
  writer.String(kRoomEventBatchDesc);
}

}  // namespace

uint32_t RandomForRow(int64_t row_id, uint32_t drop_generation) {
  // Unsigned arithmetic wraps mod 2^64; the low 32 bits are the sum mod 2^32.
  const uint64_t sum = static_cast<uint64_t>(row_id) + static_cast<uint64_t>(drop_generation) *
                                                           static_cast<uint64_t>(kRandomStride);
  return static_cast<uint32_t>(sum);
}

uint32_t RandomForPack(int64_t first_row_id, uint32_t drop_generation, size_t events) {
  const uint64_t extra = events > 1 ? static_cast<uint64_t>(events - 1) : 0;
  return static_cast<uint32_t>(RandomForRow(first_row_id, drop_generation) +
                               extra * static_cast<uint64_t>(kPackStride));
}

MsgPriority HigherPriority(MsgPriority a, MsgPriority b) {
  return static_cast<int>(a) <= static_cast<int>(b) ? a : b;  // kHigh < kNormal < kLow
}

MsgPriority PriorityForType(const TencentImOptions& options, std::string_view event_type) {
  // A handful of types at most: a scan finds one without making a std::string of the key.
  for (const auto& [type, priority] : options.priority_by_type) {
    if (type == event_type) {
      return priority;
    }
  }
  return options.msg_priority;
}

Status WriteSendGroupMsgBody(JsonWriter& writer, const SendGroupMsgParts& parts) {
  if (parts.room_id.empty()) {
    return Error{ErrorCode::kInvalidArgument, "envelope " + std::string(parts.event_id) +
                                                  ": empty room_id, no IM group to send to"};
  }
  writer.Clear();
  try {
    writer.Raw(R"({"GroupId":)");
    writer.String(parts.group_id_prefix, parts.room_id);
    writer.Raw(R"(,"Random":)");
    writer.Integer(parts.random);
    writer.Raw(R"(,"MsgPriority":")");
    writer.Raw(MsgPriorityName(parts.priority));
    writer.Raw(R"(","MsgBody":[{"MsgType":"TIMCustomElem","MsgContent":{"Data":)");
    if (parts.batch.size() > 1) {
      WriteBatchData(writer, parts.batch);
    } else {
      writer.String(parts.envelope_json);
      writer.Raw(R"(,"Desc":)");
      writer.String(parts.event_type);
    }
    writer.Raw(R"(,"Ext":)");
    writer.String(parts.event_id);
    writer.Raw("}}]}");
  } catch (const nlohmann::json::exception&) {  // invalid UTF-8 in the group id prefix
    return Error{ErrorCode::kInvalidArgument,
                 "envelope " + std::string(parts.event_id) + ": group id is not valid UTF-8"};
  }
  return {};
}

Status WriteSendGroupMsgBody(JsonWriter& body, JsonWriter& scratch, const Envelope& envelope,
                             std::string_view envelope_json, std::string_view group_id_prefix,
                             uint32_t random, MsgPriority priority) {
  if (envelope.room_id.empty()) {
    return Error{ErrorCode::kInvalidArgument,
                 "envelope " + envelope.event_id + ": empty room_id, no IM group to send to"};
  }
  if (envelope_json.empty()) {
    if (Status encoded = WriteEnvelope(scratch, FieldsOf(envelope)); !encoded.ok()) {
      return encoded;
    }
    envelope_json = scratch.text();
  }
  return WriteSendGroupMsgBody(body, SendGroupMsgParts{envelope_json,
                                                       envelope.room_id,
                                                       envelope.event_type,
                                                       envelope.event_id,
                                                       group_id_prefix,
                                                       random,
                                                       priority,
                                                       {}});
}

Result<std::string> BuildSendGroupMsgBody(const Envelope& envelope,
                                          std::string_view group_id_prefix, uint32_t random,
                                          MsgPriority priority) {
  JsonWriter body;
  JsonWriter scratch;
  if (Status s =
          WriteSendGroupMsgBody(body, scratch, envelope, {}, group_id_prefix, random, priority);
      !s.ok()) {
    return Fail(s.error());
  }
  return body.text();
}

// The body's bytes outside Data's events: GroupId, Random and MsgPriority at their widest (10
// digits, "Normal"), the element's keys, Data's {"events":[ and ]} escaped, Desc, Ext.
PackBodySize::PackBodySize(std::string_view group_id_prefix, std::string_view room_id,
                           std::string_view first_event_id) {
  constexpr std::string_view kFixed =
      R"({"GroupId":,"Random":4294967295,"MsgPriority":"Normal","MsgBody":[{"MsgType":)"
      R"("TIMCustomElem","MsgContent":{"Data":,"Desc":"RoomEventBatch","Ext":}}]})";
  std::string group(group_id_prefix);
  group.append(room_id);
  bytes_ = kFixed.size() + JsonWriter::StringLength(group) +
           JsonWriter::StringLength(first_event_id) + JsonWriter::StringLength(kBatchOpen) +
           JsonWriter::StringLength(kBatchClose) - 2;  // one pair of quotes for Data
}

size_t PackBodySize::With(std::string_view envelope_json) const {
  const size_t comma = events_ > 0 ? 1 : 0;
  return bytes_ + comma + JsonWriter::StringLength(envelope_json) - 2;
}

void PackBodySize::Add(std::string_view envelope_json) {
  bytes_ = With(envelope_json);
  ++events_;
}

SendGroupMsgTarget::SendGroupMsgTarget(uint64_t sdk_app_id, std::string_view identifier) {
  text_ = kSendGroupMsgPath;
  text_ += "?sdkappid=";
  text_ += std::to_string(sdk_app_id);
  text_ += "&identifier=";
  text_ += PercentEncode(identifier);
  text_ += "&usersig=";
  fixed_ = text_.size();
}

const std::string& SendGroupMsgTarget::For(std::string_view usersig, uint32_t url_random) {
  char digits[10];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, url_random);
  (void)ec;  // ten digits hold any uint32_t
  text_.resize(fixed_);
  text_ += usersig;
  text_ += "&random=";
  text_.append(digits, static_cast<size_t>(end - digits));
  text_ += "&contenttype=json";
  return text_;
}

std::string BuildSendGroupMsgUrl(std::string_view endpoint, uint64_t sdk_app_id,
                                 std::string_view identifier, std::string_view usersig,
                                 uint32_t url_random) {
  SendGroupMsgTarget target(sdk_app_id, identifier);
  std::string url(endpoint);
  url += target.For(usersig, url_random);
  return url;
}

}  // namespace room_outbox::core
