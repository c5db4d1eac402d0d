// Transaction::ExecuteAffected (room_outbox/hook.h): the count through the hook's own
// CountingTransaction, refused on any other implementation.
#include "counting_transaction.h"

namespace room_outbox {

Status Transaction::ExecuteAffected(std::string_view sql, const std::vector<SqlValue>& params,
                                    uint64_t* affected_rows) {
  if (affected_rows != nullptr) {
    *affected_rows = 0;
  }
  auto* counting = dynamic_cast<internal::CountingTransaction*>(this);
  if (counting == nullptr) {
    return Error{ErrorCode::kInvalidArgument,
                 "Transaction::ExecuteAffected: only the Transaction the hook hands to the "
                 "statements callback counts rows"};
  }
  return counting->ExecuteCounted(sql, params, affected_rows);
}

}  // namespace room_outbox
