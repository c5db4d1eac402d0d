// MariaDbRelayStore: the RelayStore over one MariaDB connection (see relay_store.h for the
// contract of each call; core/mysql/store_session.h for the connection policy).
//
// The calls are implemented by job: the claim in mariadb_claim.cc (read -> plan -> write,
// claim_plan.h), the result writes in relay_marks.cc, AnyDue and Stats in
// mariadb_relay_store.cc. Every
// statement that carries a value is a server-side prepared statement, prepared once per
// connection; their texts are in core/mysql/outbox_sql.h. Id lists are bound into a few fixed
// placeholder-list sizes (core/mysql/id_lists.h).
//
// Thread-safety: none; one store per thread (two stores may run concurrently against the same
// database: claims never overlap).
#pragma once

#include <cstdint>
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
    &core::sql::Stmt::kServerNow,
    &core::sql::Stmt::kDueHeads,
    &core::sql::Stmt::kDueHeadsByRoom,
    &core::sql::Stmt::kRoomsWaiting,
    &core::sql::Stmt::kRoomsWaitingByRoom,
    &core::sql::Stmt::kRoomHeadsIndex,
    &core::sql::Stmt::kClaimWindow,
    &core::sql::Stmt::kAnyDue,
    &core::sql::Stmt::kRoomPrefix,
    &core::sql::Stmt::kRoomAfter,
    &core::sql::Stmt::kLockRows,
    &core::sql::Stmt::kLease,
    &core::sql::Stmt::kSchedule,
    &core::sql::Stmt::kMarkPublished,
    &core::sql::Stmt::kRelease,
    &core::sql::Stmt::kMarkFailed,
    &core::sql::Stmt::kMarkParked,
    &core::sql::Stmt::kStats,
};

class MariaDbRelayStore final : public RelayStore {
 public:
  explicit MariaDbRelayStore(const MysqlOptions& options) : session_(options, kRelayStatements) {}

  // Connects now unless connected (StoreSession::Connect).
  [[nodiscard]] core::Result<void> Connect() { return session_.Connect(); }
  bool connected() const { return session_.connected(); }
  // The server's id of the current connection; 0 when not connected.
  uint64_t connection_id() const { return session_.connection_id(); }
  // StoreSession::RowsRead: for tests and benchmarks of the claim's cost.
  [[nodiscard]] core::Result<int64_t> RowsRead() { return session_.RowsRead(); }

  [[nodiscard]] core::Result<Claim> ClaimDue(const ClaimOptions& options) override;
  [[nodiscard]] core::Result<bool> AnyDue() override;
  [[nodiscard]] core::Result<size_t> MarkPublished(const std::string& token,
                                                   std::span<const int64_t> ids) override {
    return session_.MarkPublished(token, ids);
  }
  [[nodiscard]] core::Result<size_t> MarkFailed(const std::string& token,
                                                std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] core::Result<size_t> MarkParked(const std::string& token,
                                                std::span<const FailedAttempt> attempts) override;
  [[nodiscard]] core::Result<size_t> Release(const std::string& token,
                                             std::span<const int64_t> ids) override {
    return session_.Release(token, ids);
  }
  [[nodiscard]] core::Result<OutboxStats> Stats() override;

 private:
  // Runs the prepared statement `id` once per attempt with params_of(attempt), all in one
  // transaction when there is more than one; returns the rows changed.
  template <class ParamsOf>
  [[nodiscard]] core::Result<size_t> UpdateEachAttempt(const core::sql::Statement& id,
                                                       std::span<const FailedAttempt> attempts,
                                                       ParamsOf&& params_of);

  // The heads statements that fit the connected database's idx_room_status (kDueHeads and
  // kRoomsWaiting from schema 006 on, their *ByRoom forms before), read once per connection.
  struct RoomHeads {
    const core::sql::Statement* due = nullptr;
    const core::sql::Statement* waiting = nullptr;
  };
  [[nodiscard]] core::Result<RoomHeads> RoomHeadsOf(core::MariaDbConnection& conn);

  // The claim's transaction: ClaimOnce, then COMMIT. A COMMIT without an answer records the
  // claim's rows as an uncertain lease.
  [[nodiscard]] core::Result<Claim> ClaimTransaction(core::MariaDbConnection& conn,
                                                     const ClaimOptions& options,
                                                     const core::sql::Statement* heads);
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
  std::vector<UncertainLease> uncertain_;
  RoomHeads heads_;
  uint64_t heads_connection_ = 0;  // the connection heads_ was read on
};

// A store that connects on its first call (or on Connect()).
[[nodiscard]] std::unique_ptr<MariaDbRelayStore> MakeMariaDbRelayStore(const MysqlOptions& options);

}  // namespace room_outbox::relay
