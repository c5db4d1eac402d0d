// CountingTransaction: the hook's own Transaction, which can also count the rows a statement
// matched. Transaction::ExecuteAffected (hook.h) is not virtual, so that the public class keeps
// the layout and vtable of its ABI baseline; it reaches the count through this interface.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "room_outbox/hook.h"

namespace room_outbox::internal {

class CountingTransaction : public Transaction {
 public:
  // Execute that stores in *affected_rows (when not null) the rows matched, as
  // Transaction::ExecuteAffected documents; 0 on failure.
  virtual Status ExecuteCounted(std::string_view sql, const std::vector<SqlValue>& params,
                                uint64_t* affected_rows) = 0;
};

}  // namespace room_outbox::internal
