#pragma once
// The claim's writes (MariaDbRelayStore::ClaimDue, mariadb_claim.cc): the leases, the scheduled
// rows' next attempts and the rooms' next due times, by primary key, of rows and rooms the claim
// locked. Every statement's text is in outbox_sql.h.

#include <vector>

#include "core/mysql/connection.h"
#include "store/claim_plan.h"
#include "store/claim_reads.h"
#include "store/relay_store.h"

namespace room_outbox::relay::claim_sql {

// Writes `plan` (a new token and lease when it leases rows) and returns `claim` with the rows it
// leased (each once, in id order), its paced rooms and how soon a room it made due comes due.
core::Result<Claim> WritePlan(core::MariaDbConnection& conn, const ClaimOptions& options,
                              const ClaimPlan& plan, std::vector<LockedRow> locked, Claim claim);

}  // namespace room_outbox::relay::claim_sql
