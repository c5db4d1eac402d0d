// Every statement of outbox_sql.h a set sends, in every size the stores use, for the tools that
// read them all: the grammar check's statement list (tests/sqlcheck) and the statement tests.
#pragma once

#include <string_view>

#include "core/mysql/outbox_sql.h"
#include "core/mysql/statement_text.h"

namespace room_outbox::testing {

// Calls visit(name, text) for every statement of `set` in every size, in kStatements order.
template <class Visit>
void ForEachStatementText(core::StatementSet set, Visit&& visit) {
  for (const core::sql::Statement* entry : core::sql::kStatements) {
    if (!core::InSet(*entry, set)) {
      continue;
    }
    for (size_t n : core::SizesOf(*entry)) {
      visit(std::string_view(core::StatementName(*entry, n)),
            std::string_view(core::StatementText(set, *entry, n)));
    }
  }
}

}  // namespace room_outbox::testing
