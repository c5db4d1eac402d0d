// The statements of a set as the stores send them, composed from the fragments of an outbox_sql.h
// entry: a fixed text as it is, and every other shape for each size the store uses (an id list of
// each id_lists.h size, a multi-row INSERT of 1..kMaxRowsPerOutboxInsert rows, ...). The stores
// prepare these texts and nothing else, so what a grammar check reads through these functions
// (every statement of a set in every shape) is what a server gets.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "core/mysql/dialect.h"
#include "core/mysql/outbox_sql.h"

namespace room_outbox::core {

// True when `set` sends statement `id` at all.
bool InSet(const sql::Statement& id, StatementSet set);

// The sizes `id` is prepared in: {0} for a fixed statement, the id_lists.h sizes for lists,
// 1..kMaxRowsPerOutboxInsert for the outbox INSERT.
std::span<const size_t> SizesOf(const sql::Statement& id);

// The text `set` sends for `id` at size `n` (one of SizesOf(id)). Empty when !InSet(id, set).
std::string StatementText(StatementSet set, const sql::Statement& id, size_t n = 0);

// The statement's name at size n: "claim_window", "lease_8", "insert_outbox_rows_3".
std::string StatementName(const sql::Statement& id, size_t n = 0);

}  // namespace room_outbox::core
