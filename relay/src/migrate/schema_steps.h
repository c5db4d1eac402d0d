// The schema, as the binary carries it: every schema/*.sql file in file-name order, embedded at
// build time (cmake/embed_schema.cmake), each a step numbered by its file name's prefix. The
// files are the one source; each records its own number in room_outbox_schema_version as its
// last statement.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace room_outbox::relay::migrate {

struct SchemaStep {
  int64_t version;         // 3 for 003_parked.sql
  std::string_view name;   // "003_parked"
  std::string_view text;   // the file, statements separated by ';'
};

// Every step, in version order.
std::span<const SchemaStep> SchemaSteps();

}  // namespace room_outbox::relay::migrate
