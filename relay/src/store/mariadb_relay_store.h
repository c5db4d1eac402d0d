// MariaDbRelayStore: the RelayStore over one MariaDB connection (see relay_store.h for the
// contract of each call; core/mysql/store_session.h for the connection policy).
//
// The calls are implemented by job: the claim in mariadb_claim.cc (read -> plan -> write,
// claim_plan.h; its statements in claim_reads.cc and claim_writes.cc), the result writes in
// relay_marks.cc, AnyDue and Stats in mariadb_relay_store.cc. Every statement that carries a value
// is a server-side prepared statement, prepared once per connection; their texts are in
// core/mysql/outbox_sql.h. Id lists are bound into a few fixed placeholder-list sizes
// (core/mysql/id_lists.h).
//
// Thread-safety: none; one store per thread (two stores may run concurrently against the same
// database: claims never overlap).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mysql/store_session.h"
#include "room_outbox/options.h"
#include "store/relay_store.h"

namespace room_outbox::relay {

// What the store prepares at connect: the statements of its calls (a composed statement at its
// smallest size). A statement outside the connection's set is skipped.
inline constexpr const core::sql::Statement* kRelayStatements[] = {
    &core::sql::Stmt::kServerNow,     &core::sql::Stmt::kServerNowRooms,
    &core::sql::Stmt::kClaimWindow,   &core::sql::Stmt::kListArrivals,
    &core::sql::Stmt::kListRooms,     &core::sql::Stmt::kListMark,
    &core::sql::Stmt::kDueRooms,      &core::sql::Stmt::kAnyDue,
    &core::sql::Stmt::kAnyDueRooms,   &core::sql::Stmt::kRoomPrefix,
    &core::sql::Stmt::kRoomAfter,     &core::sql::Stmt::kLockRows,
    &core::sql::Stmt::kLease,         &core::sql::Stmt::kSchedule,
    &core::sql::Stmt::kRoomsDue,      &core::sql::Stmt::kRowRooms,
    &core::sql::Stmt::kRoomsProgress, &core::sql::Stmt::kRoomsRetry,
    &core::sql::Stmt::kMarkPublished, &core::sql::Stmt::kRelayMarkPublished,
    &core::sql::Stmt::kRelayRelease,  &core::sql::Stmt::kMarkFailed,
    &core::sql::Stmt::kMarkParked,    &core::sql::Stmt::kStats,
    &core::sql::Stmt::kRoomsBacklog,
};

class MariaDbRelayStore final : public RelayStore {
 public:
  // `room_gap_ms`: [outbox_worker] room_min_interval (0: none). A room whose message this store
  // marks published is due again that long after the mark at the earliest, whichever relay claims
  // it next.
  explicit MariaDbRelayStore(const MysqlOptions& options, int64_t room_gap_ms = 0)
      : session_(options, kRelayStatements), room_gap_ms_(room_gap_ms) {}

  // Connects now unless connected (StoreSession::Connect).
  [[nodiscard]] core::Result<void> Connect() { return session_.Connect(); }
  bool connected() const { return session_.connected(); }
  // The server's id of the current connection; 0 when not connected.
  uint64_t connection_id() const { return session_.connection_id(); }
  // StoreSession::RowsRead: for tests and benchmarks of the claim's cost.
  [[nodiscard]] core::Result<int64_t> RowsRead() { return session_.RowsRead(); }

  [[nodiscard]] core::Result<Claim> ClaimDue(const ClaimOptions& options) override;
  [[nodiscard]] core::Result<bool> AnyDue(bool per_room_order) override;
  [[nodiscard]] core::Result<size_t> MarkPublished(const std::string& token,
                                                   std::span<const int64_t> ids,
                                                   std::span<const AttemptNote> notes) override;
  [[nodiscard]] core::Result<size_t> MarkFailed(const std::string& token,
                                                std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] core::Result<size_t> MarkParked(const std::string& token,
                                                std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] core::Result<size_t> Release(const std::string& token,
                                             std::span<const int64_t> ids) override {
    return session_.Release(token, ids, core::sql::Stmt::kRelayRelease);
  }
  [[nodiscard]] core::Result<OutboxStats> Stats() override;

 private:
  // Runs the prepared statement `id` once per attempt with params_of(attempt), then brings the
  // attempts' rooms back on the room schedule (RoomsAfterMark with next_of(attempt): a statement
  // and its delay), all in one transaction; returns the rows changed.
  // A mark's transaction (session_.InTransaction), run again when a deadlock rolled it back
  // (relay_marks.cc: kMarkAttempts).
  template <class Body>
  auto MarkTransaction(core::MariaDbConnection& conn, Body&& body) -> decltype(body());
  template <class ParamsOf, class NextOf>
  [[nodiscard]] core::Result<size_t> UpdateEachAttempt(const core::sql::Statement& id,
                                                       std::span<const FailedAttempt> attempts,
                                                       ParamsOf&& params_of, NextOf&& next_of);

  // The claim's transaction: ClaimOnce, then COMMIT. A COMMIT without an answer records the
  // claim's rows as an uncertain lease.
  [[nodiscard]] core::Result<Claim> ClaimTransaction(core::MariaDbConnection& conn,
                                                     const ClaimOptions& options);
  // A claim whose COMMIT got no answer (the connection was cut while it was in flight): the
  // server may or may not hold its lease. Its rows are given back (Release by its token, due at
  // once) before the next claim, so they wait neither for the lease nor for nobody.
  struct UncertainLease {
    std::string token;
    std::vector<int64_t> ids;
  };
  // At most this many are kept; beyond, the oldest one's rows wait out their lease.
  static constexpr size_t kMaxUncertainLeases = 16;
  void NoteUncertainLease(const Claim& claim);
  // Gives back every uncertain lease; stops at the first failure (kept for the next call).
  [[nodiscard]] core::Result<void> ReleaseUncertainLeases();

  core::StoreSession session_;
  int64_t room_gap_ms_ = 0;
  std::vector<UncertainLease> uncertain_;
};

// What a mark makes of its row's room on the room schedule: kRoomsProgress (due at the server's
// now + delay_ms at the latest: the room's gap) or kRoomsRetry (due at the server's now +
// delay_ms: a failed head's retry).
struct RoomNextOfRow {
  const core::sql::Statement* statement = nullptr;
  int64_t delay_ms = 0;
};

// The rooms of the rows of `next_of_row` (by row id) on the room schedule after a mark, in room_id
// order, inside the caller's transaction.
[[nodiscard]] core::Result<void> RoomsAfterMark(
    core::MariaDbConnection& conn, const std::map<int64_t, RoomNextOfRow>& next_of_row);

// A store that connects on its first call (or on Connect()).
[[nodiscard]] std::unique_ptr<MariaDbRelayStore> MakeMariaDbRelayStore(const MysqlOptions& options,
                                                                       int64_t room_gap_ms = 0);

}  // namespace room_outbox::relay
