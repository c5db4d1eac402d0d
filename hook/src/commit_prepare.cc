#include "commit_prepare.h"

#include <string>
#include <utility>

#include "core/tencent/im_request.h"

namespace room_outbox::internal {
namespace {

constexpr int64_t kSyncLeaseMarginMs = 2000;

int64_t OccurredAt(const Event& event, int64_t now_ms) {
  return event.occurred_at_ms > 0 ? event.occurred_at_ms : now_ms;
}

core::EnvelopeFields FieldsFor(const HookOptions& options, const Command& command,
                               const Event& event, int64_t now_ms) {
  return core::EnvelopeFields{event.event_id,  event.event_type,          command.room_id,
                              event.room_seq,  command.command_id,        command.request_id,
                              options.node_id, OccurredAt(event, now_ms), event.payload};
}

}  // namespace

int64_t SyncLeaseMs(std::chrono::milliseconds sync_publish_timeout) {
  return sync_publish_timeout.count() + kSyncLeaseMarginMs;
}

core::Result<PreparedCommit> PrepareCommit(const HookOptions& options,
                                           const core::Publisher& publisher, const Command& command,
                                           const std::vector<Event>& events, int64_t now_ms,
                                           CommitScratch& scratch) {
  PreparedCommit prepared;
  prepared.now_ms = now_ms;
  CommitRequest& request = prepared.request;
  request.command = command;
  request.check_earlier_pending = options.per_room_order;
  request.rows.reserve(events.size());
  size_t pending = 0;
  for (const Event& event : events) {
    const core::EnvelopeFields fields = FieldsFor(options, command, event, now_ms);
    if (Status encoded = core::WriteEnvelope(scratch.envelope, fields); !encoded.ok()) {
      return core::Fail(encoded.error());
    }
    const std::string& json = scratch.envelope.text();
    const bool published = !publisher.Sends(event.event_type);
    if (!published) {
      if (Status fits = CheckBodySize(options.tencent_im, fields, json, scratch.body); !fits.ok()) {
        return core::Fail(fits.error());
      }
    }
    pending += published ? 0 : 1;
    request.rows.push_back(NewOutboxRow{event.event_id, event.event_type, command.room_id,
                                        command.command_id, command.request_id, json,
                                        published});
  }
  request.sync_lease =
      std::chrono::milliseconds(pending == 0 ? 0 : SyncLeaseMs(options.sync_publish_timeout));
  return prepared;
}

void AddEnvelopes(PreparedCommit& prepared, const HookOptions& options, const Command& command,
                  const std::vector<Event>& events) {
  prepared.envelopes.clear();
  prepared.envelopes.reserve(events.size());
  for (const Event& event : events) {
    prepared.envelopes.push_back(Envelope{event.event_id, event.event_type, command.room_id,
                                          event.room_seq, command.command_id, command.request_id,
                                          options.node_id, OccurredAt(event, prepared.now_ms),
                                          event.payload});
  }
}

Status CheckBodySize(const TencentImOptions& im, const core::EnvelopeFields& fields,
                     std::string_view envelope_json, core::JsonWriter& body) {
  if (Status built = core::WriteSendGroupMsgBody(
          body, core::SendGroupMsgParts{envelope_json, fields.room_id, fields.event_type,
                                        fields.event_id, im.group_id_prefix, kWidestRandom,
                                        core::PriorityForType(im, fields.event_type), {}});
      !built.ok()) {
    return built;
  }
  if (body.text().size() > im.max_body_bytes) {
    return Error{ErrorCode::kInvalidArgument,
                 "event " + std::string(fields.event_id) + ": the IM request body would be " +
                     std::to_string(body.text().size()) +
                     " bytes, over [tencent_im] max_body_bytes " +
                     std::to_string(im.max_body_bytes)};
  }
  return {};
}

}  // namespace room_outbox::internal
