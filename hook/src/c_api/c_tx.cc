// room_outbox_tx_execute_affected (room_outbox/c.h) and the statement run both it and
// room_outbox_tx_execute share: Transaction::ExecuteAffected of the C++ API.
#include <string>
#include <vector>

#include "c_api/c_objects.h"

namespace room_outbox::c_api {

room_outbox_status ExecuteInTx(const char* where, room_outbox_tx* tx, const char* sql,
                               size_t sql_len, const room_outbox_params* params,
                               uint64_t* affected_rows, room_outbox_error** err) noexcept {
  if (affected_rows != nullptr) {
    *affected_rows = 0;
  }
  return Guard(where, err, [&] {
    if (tx == nullptr) {
      return StoreError(err, ROOM_OUTBOX_INVALID_ARGUMENT, where, "NULL transaction");
    }
    auto text = Text(sql, sql_len, (std::string(where) + ": sql").c_str());
    if (!text) {
      return StoreError(err, text.error());
    }
    static const std::vector<SqlValue> kNone;
    const std::vector<SqlValue>& values = params != nullptr ? params->values : kNone;
    Status done = affected_rows != nullptr ? tx->tx.ExecuteAffected(*text, values, affected_rows)
                                           : tx->tx.Execute(*text, values);
    if (!done.ok()) {
      if (!tx->failure) {
        tx->failure = done.error();
      }
      return StoreError(err, done.error());
    }
    return StoreOk(err);
  });
}

}  // namespace room_outbox::c_api

extern "C" {

room_outbox_status room_outbox_tx_execute_affected(room_outbox_tx* tx, const char* sql,
                                                   size_t sql_len,
                                                   const room_outbox_params* params,
                                                   uint64_t* affected_rows,
                                                   room_outbox_error** err) {
  return room_outbox::c_api::ExecuteInTx("room_outbox_tx_execute_affected", tx, sql, sql_len,
                                         params, affected_rows, err);
}

}  // extern "C"
