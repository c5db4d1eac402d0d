// The grants of docs/grants.sql as tests run them: each statement (comment lines dropped, one per
// line, ending in ';'), with its placeholders ({database}, {operator}, {hook}, {relay}) as written
// or replaced by a test's names.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace room_outbox::testing {

// Every statement of docs/grants.sql, placeholders as written.
std::vector<std::string> GrantStatements();

// `text` with each key of `names` replaced by its value.
std::string Substitute(std::string text, const std::map<std::string, std::string>& names);

// The statements that grant to `target` ("{operator}", "{hook}" or "{relay}"), with `names`
// substituted.
std::vector<std::string> GrantsTo(const std::string& target,
                                  const std::map<std::string, std::string>& names);

}  // namespace room_outbox::testing
