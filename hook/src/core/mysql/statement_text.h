// The statements of a set as the store sends them, composed from the fragments of outbox_sql.h's
// table: a fixed text as it is, and every other shape for each size the store uses (an id list of
// each id_lists.h size, a multi-row INSERT of 1..kMaxRowsPerOutboxInsert rows, ...). The store
// prepares these texts and nothing else, so what a grammar check reads from here (every
// statement of a set in every shape, ForEachStatementText) is what a server gets.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "core/mysql/dialect.h"
#include "core/mysql/outbox_sql.h"

namespace room_outbox {

// True when `set` sends statement `id` at all.
bool InSet(sql::Stmt id, StatementSet set);

// The sizes `id` is prepared in: {0} for a fixed statement, the id_lists.h sizes for lists,
// 1..kMaxRowsPerOutboxInsert for the outbox INSERT.
std::span<const size_t> SizesOf(sql::Stmt id);

// The text `set` sends for `id` at size `n` (one of SizesOf(id)). Empty when !InSet(id, set).
std::string StatementText(StatementSet set, sql::Stmt id, size_t n = 0);

// The statement's name at size n: "claim_window", "lease_8", "insert_outbox_rows_3".
std::string StatementName(sql::Stmt id, size_t n = 0);

// Calls visit(name, text) for every statement of `set` in every size, in table order.
void ForEachStatementText(StatementSet set,
                          const std::function<void(std::string_view, std::string_view)>& visit);

}  // namespace room_outbox
