// The benchmarks of `make bench`. Each function runs one group on
// fresh databases of the private MariaDB named in the context and adds its rows to the report.
// They print figures and never assert on speed.
#pragma once

#include <chrono>
#include <memory>

#include "bench/bench_support.h"
#include "bench/report.h"
#include "support/fake_im_server.h"

namespace room_outbox::bench {

// 1. Backlog drain of ctx.drain_rows rows against an instant IM stub: the relay's worker, the
//    seed's V1 loop (sampled, extrapolated) and the database ceiling.
void RunBacklogDrain(const BenchContext& ctx, Report& report);

// 2. The relay against a stub with 20 ms latency under a 200/s request budget, vs sequential.
void RunBudgetedDrain(const BenchContext& ctx, Report& report);

// 3. Hook Commit (1 command + 3 events) latency, IM up and IM failing, vs a one-row insert.
void RunCommitLatency(const BenchContext& ctx, Report& report);

// 4. One claim poll with 1M published + 100 pending rows vs 100 pending rows alone, and the
//    EXPLAIN of the claim queries.
void RunClaimPoll(const BenchContext& ctx, Report& report);

// 5. The real outbox-relay binary idle on an empty outbox: CPU seconds and peak RSS.
void RunIdleRelay(const BenchContext& ctx, Report& report);

// 6. Commit -> published latency when the hook's sync publish fails and the relay delivers.
void RunCommitToPublished(const BenchContext& ctx, Report& report);
// 6a-6i (called by RunCommitToPublished): the same for every path on which the hook leaves rows
// for the relay, [wake] socket, pace off, at 20 commands/s and at full speed.
void RunWakePaths(const BenchContext& ctx, Report& report);

// 7. A backlog where one busy room holds half the rows: the other rooms' drain time vs the same
//    rows alone, and the busy room's drain time vs its pace.
void RunBusyRoom(const BenchContext& ctx, Report& report);

// 8. One claim poll for other rooms beside a room of 100k pending rows behind a failing head, vs
//    the same claim without that room, and the claims it takes to park the room's due rows.
void RunBlockedRoomClaim(const BenchContext& ctx, Report& report);

// 9. HookOptions::sync_publish inline / background / off against a 20 ms IM round trip: Commit
//    latency and commit -> IM latency side by side.
void RunSyncModes(const BenchContext& ctx, Report& report);

// 10. What a published row costs the outbox-relay process: CPU per 10k rows, wall time and
//     statements per row over a drain against an instant stub.
void RunCostPerRow(const BenchContext& ctx, Report& report);

// 10, under valgrind (scripts/callgrind-round.sh): two worker rounds of `rows_per_round` rows
// each in-process, printed as key=value lines; 0 when both published every row.
int RunCallgrindRounds(const BenchContext& ctx, size_t rows_per_round);

// 11. One, two and three outbox-relay processes on one database against a 20 ms stub: the
//     aggregate rate without and with a budget per relay, and exactly-once at the stub.
void RunScaleOut(const BenchContext& ctx, Report& report);

// 12. The MySQL statement set beside the MariaDB set on the same server: Commit latency and the
//     claim + mark ceiling.
void RunDialectSets(const BenchContext& ctx, Report& report);

// 13. Commits per second with 1, 4 and 16 threads, each with its own Hook (sync publish off) on
//     rooms of its own, beside the floor transaction with one connection per thread, at
//     innodb_flush_log_at_trx_commit 1 and 2 (set on the server, read back, then restored).
void RunThreadedCommits(const BenchContext& ctx, Report& report);

// 14. One claim poll for 100 quiet rooms beside a room of 10k due rows committed before them, vs
//     the same rooms alone: time, rows read and quiet rooms reached per claim.
void RunHotRoomClaim(const BenchContext& ctx, Report& report);

// 15. A gift storm: 100 commands/s into one room beside 1/s into each of 20 rooms, against an
//     IM stand-in that caps each group at 40 messages/s; commit -> delivered per room kind, with
//     the hook's sync publish inline and off.
void RunGiftStorm(const BenchContext& ctx, Report& report);

// 16. A backlog of ctx.pack_rooms busy rooms x ctx.pack_room_events events drained by one
//     outbox-relay process against a stand-in that allows the app 200 calls/s (60007 beyond) and
//     each group 40 messages/s, with pack_max_events 1 and 20: events/s, calls/s, and the relay's
//     CPU per event.
void RunPackedDrain(const BenchContext& ctx, Report& report);

// 17. Recovery at platform scale: backlogs of 2,000 to 100,000 rooms x 3 events drained by one or
//     three outbox-relay processes against a stand-in that allows the app 300 or 1,500 calls/s and
//     each group 40 messages/s, with pack_max_events 20: drain time vs Tencent's bound, messages/s,
//     events per message; and the rows one claim reads with 1,000 vs 100,000 rooms backlogged.
void RunRecovery(const BenchContext& ctx, Report& report);

// A fake IM server on 127.0.0.1 answering OK after `latency`, keeping counters only.
std::unique_ptr<testing::FakeImServer> StartStub(std::chrono::milliseconds latency);

}  // namespace room_outbox::bench
