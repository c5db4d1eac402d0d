// Every statement of outbox_sql.h a set sends, in every size the stores use, for the tools that
// read them all: the grammar check's statement list (tests/sqlcheck) and the statement tests.
#pragma once

#include <string_view>

#include "core/mysql/outbox_sql.h"
#include "core/mysql/statement_text.h"

namespace room_outbox::testing {

// Calls visit(name, text) for every statement of `set` in every size, in kStatements order.
template <class Visit>
void ForEachStatementText(StatementSet set, Visit&& visit) {
  for (const sql::Statement* entry : sql::kStatements) {
    if (!InSet(*entry, set)) {
      continue;
    }
    for (size_t n : SizesOf(*entry)) {
      visit(std::string_view(StatementName(*entry, n)),
            std::string_view(StatementText(set, *entry, n)));
    }
  }
}

}  // namespace room_outbox::testing
