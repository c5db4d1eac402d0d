// Outbox rows and claims as the worker's unit tests hand them to a mock store: a valid envelope
// per row, ids doubling as room_seq. Header-only test support.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/envelope_codec.h"
#include "store/hook_store.h"

namespace room_outbox::testing {

inline relay::OutboxRow WorkerRow(int64_t id, const std::string& room,
                                  const std::string& type = "RoomGiftSent",
                                  int64_t retry_count = 0) {
  Envelope e;
  e.event_id = "evt-" + std::to_string(id);
  e.event_type = type;
  e.room_id = room;
  e.room_seq = id;
  e.command_id = "cmd-" + std::to_string(id);
  e.request_id = "req-" + std::to_string(id);
  e.node_id = "node-a";
  e.occurred_at_ms = 1'700'000'000'000;
  relay::OutboxRow row;
  row.id = id;
  row.event_id = e.event_id;
  row.event_type = type;
  row.room_id = room;
  row.envelope = core::EncodeEnvelope(e).value();
  row.retry_count = retry_count;
  row.created_at_ms = e.occurred_at_ms;
  return row;
}

inline relay::Claim WorkerClaim(const std::string& token, std::vector<relay::OutboxRow> rows) {
  relay::Claim c;
  c.token = token;
  c.rows = std::move(rows);
  return c;
}

}  // namespace room_outbox::testing
