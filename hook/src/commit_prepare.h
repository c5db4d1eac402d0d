// What Commit builds before BEGIN: the rows to write, the envelopes to publish, and the sync
// lease. Refuses (kInvalidArgument, nothing written) an event whose IM request body would exceed
// [tencent_im] max_body_bytes: Tencent refuses such a body forever (80002), so it is refused
// here, where the caller can still do something about it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "background_publisher.h"
#include "core/envelope_codec.h"
#include "core/json_writer.h"
#include "core/publisher.h"
#include "core/result.h"
#include "room_outbox/hook.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

// How a commit's pending rows are handled after COMMIT.
enum class SyncMode {
  kPublish,         // the sync publish runs (breaker closed)
  kProbe,           // it runs as the sync breaker's probe
  kBreakerSkipped,  // the breaker is open: the rows are written due at once for the relay
  kOff,             // HookOptions::sync_publish is kOff: the same
  kQueueFull,       // kBackground and its queue is full: the same
  kRoomRefused,     // the room is backed off after IM's frequency control refused it: the same
};

// What Commit writes and what it publishes afterwards, built before BEGIN.
struct PreparedCommit {
  CommitRequest request;
  // One per event, built by AddEnvelopes only when the rows get a sync publish; the encoding of
  // each is its row's NewOutboxRow::envelope.
  std::vector<Envelope> envelopes;
  int64_t now_ms = 0;  // the default occurred_at_ms
  SyncMode mode = SyncMode::kPublish;
  // kPublish / kProbe by the background publisher: a queue slot is reserved (QueueSlot) and
  // `room` is what the queue held of the room before the transaction.
  bool background = false;
  RoomView room;
};

// The lease written on a command's pending rows (counted on the server's clock from their
// insert): long enough for the command's sync publish (all its events within one
// sync_publish_timeout, measured from just before the insert) plus a margin for the marks, so
// the relay does not send a row the hook is still working on.
int64_t SyncLeaseMs(std::chrono::milliseconds sync_publish_timeout);

// The widest Random a body can carry: the commit-time body-size check builds the body with it,
// so no row id or drop generation can make the real body longer.
inline constexpr uint32_t kWidestRandom = 4294967295u;

// The buffers Commit reuses from one command to the next for envelopes and IM bodies.
struct CommitScratch {
  core::JsonWriter envelope;
  core::JsonWriter body;
};

// The rows (types `publisher` does not send are written published) and the sync lease (none
// when nothing is pending); no claim token yet (ChooseSyncMode gives one when the rows get a
// sync publish). `options` is normalised (node_id, max_body_bytes and sync_publish_timeout set);
// `now_ms`, the host's wall clock, is only the default of an event's occurred_at_ms (information
// for clients, never compared).
core::Result<PreparedCommit> PrepareCommit(const HookOptions& options,
                                           const core::Publisher& publisher, const Command& command,
                                           const std::vector<Event>& events, int64_t now_ms,
                                           CommitScratch& scratch);

// Fills prepared.envelopes (one per event) for the sync publish.
void AddEnvelopes(PreparedCommit& prepared, const HookOptions& options, const Command& command,
                  const std::vector<Event>& events);

// The body-size check alone: the body of the envelope `fields`, whose encoding is
// `envelope_json`, is built into `body` as the publisher builds it, with kWidestRandom.
Status CheckBodySize(const TencentImOptions& im, const core::EnvelopeFields& fields,
                     std::string_view envelope_json, core::JsonWriter& body);

}  // namespace room_outbox::internal
