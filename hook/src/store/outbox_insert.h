// The outbox rows of one commit, written with multi-row INSERTs (outbox_sql.h, kInsertOutbox): one
// statement for up to kMaxRowsPerOutboxInsert rows holding at most about
// kMaxBytesPerOutboxInsert bytes of values (a single larger row goes alone), so a command of a
// few events is one round trip and no statement grows past the server's max_allowed_packet. Each
// row count has its own statement, prepared once per connection and reused. Values are bound in
// place, never copied.
//
// The rows' ids: with RETURNING (the MariaDB set) each INSERT hands back its rows' ids with their
// event_ids; without it (the MySQL set) ReadBackCommit reads them, with the server's clock and
// the per-room check, in one SELECT after the last INSERT, when the rows are leased (unleased
// rows' ids are not needed). Either way each id is matched to its row by event_id, never computed
// from LAST_INSERT_ID().
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/mysql/connection.h"
#include "core/mysql/outbox_sql.h"
#include "core/result.h"
#include "store/hook_store.h"

namespace room_outbox::internal {

inline constexpr size_t kMaxRowsPerOutboxInsert = core::sql::kMaxRowsPerOutboxInsert;
inline constexpr size_t kMaxBytesPerOutboxInsert = 256 * 1024;

// Inserts `rows` in their order, inside the caller's open transaction: pending rows leased to
// `token` for `lease_ms` on the server's clock (an empty token: NULL, and the caller passes 0),
// NewOutboxRow::published rows as published. With RETURNING, appends the rows' ids to `ids` in
// the same order; without, leaves `ids` for ReadBackCommit. A failure leaves the transaction for
// the caller to roll back.
[[nodiscard]] core::Result<void> InsertOutboxRows(core::MariaDbConnection& conn,
                                                  std::span<const NewOutboxRow> rows,
                                                  std::string_view token, int64_t lease_ms,
                                                  std::vector<int64_t>& ids);

// The MySQL set's read-back (kCommitReadBack, or kCommitReadBackChecked with `check`) of the
// command the transaction just wrote: sets write.server_now_ms, write.earlier_pending and
// write.row_ids (in the order of `rows`).
[[nodiscard]] core::Result<void> ReadBackCommit(core::MariaDbConnection& conn,
                                                const Command& command,
                                                std::span<const NewOutboxRow> rows, bool check,
                                                CommitWrite& write);

// How many of `rows` (at least one when there is any) the next statement takes.
[[nodiscard]] size_t OutboxInsertChunk(std::span<const NewOutboxRow> rows);

}  // namespace room_outbox::internal
