#include "commit_prepare.h"

#include <string>
#include <utility>

#include "core/claim_token.h"
#include "core/envelope_codec.h"
#include "core/tencent/im_request.h"

namespace room_outbox::internal {
namespace {

constexpr int64_t kSyncLeaseMarginMs = 2000;

}  // namespace

int64_t SyncLeaseMs(std::chrono::milliseconds sync_publish_timeout) {
  return sync_publish_timeout.count() + kSyncLeaseMarginMs;
}

Result<PreparedCommit> PrepareCommit(const HookOptions& options, const Publisher& publisher,
                                     const Command& command, const std::vector<Event>& events,
                                     int64_t now_ms) {
  PreparedCommit prepared;
  CommitRequest& request = prepared.request;
  request.command = command;
  request.token = NewClaimToken();
  request.check_earlier_pending = options.per_room_order;
  size_t pending = 0;
  for (const Event& event : events) {
    Envelope envelope{event.event_id,     event.event_type,
                      command.room_id,    event.room_seq,
                      command.command_id, command.request_id,
                      options.node_id,    event.occurred_at_ms > 0 ? event.occurred_at_ms : now_ms,
                      event.payload};
    auto json = EncodeEnvelope(envelope);
    if (!json) {
      return Fail(json.error());
    }
    const bool published = !publisher.Sends(event.event_type);
    if (!published) {
      if (Status fits = CheckBodySize(options.tencent_im, envelope); !fits.ok()) {
        return Fail(fits.error());
      }
    }
    pending += published ? 0 : 1;
    request.rows.push_back(NewOutboxRow{event.event_id, event.event_type, command.room_id,
                                        command.command_id, command.request_id, std::move(*json),
                                        published});
    prepared.envelopes.push_back(std::move(envelope));
  }
  request.sync_lease =
      std::chrono::milliseconds(pending == 0 ? 0 : SyncLeaseMs(options.sync_publish_timeout));
  return prepared;
}

Status CheckBodySize(const TencentImOptions& im, const Envelope& envelope) {
  auto body = BuildSendGroupMsgBody(envelope, im.group_id_prefix, kWidestRandom,
                                    PriorityForType(im, envelope.event_type));
  if (!body) {
    return body.error();
  }
  if (body->size() > im.max_body_bytes) {
    return Error{ErrorCode::kInvalidArgument,
                 "event " + envelope.event_id + ": the IM request body would be " +
                     std::to_string(body->size()) + " bytes, over [tencent_im] max_body_bytes " +
                     std::to_string(im.max_body_bytes)};
  }
  return {};
}

}  // namespace room_outbox::internal
