package dbtest

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"testing"
	"time"

	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
)

// BenchmarkCommitToPublished: 200 one-event commands back to back over 20 rooms, each committed
// by Writer.Commit and delivered by a real relay woken by it (poll_interval 30 s), with the
// relay's default room_min_interval (25 ms, Tencent's 40 messages/s per group) and with pacing
// off. Reports the time from a row's insert to its publication on the database server's clock
// (published_at_ms - created_at_ms) and Commit's own time. Not part of the test run:
//
//	go test -run NONE -bench CommitToPublished -benchtime 1x   (with run-gosql-test.sh's variables)
func BenchmarkCommitToPublished(b *testing.B) {
	env := environment(b)
	for _, pace := range []string{"25ms", "0ms"} {
		b.Run("room_min_interval="+pace, func(b *testing.B) {
			dir := b.TempDir()
			wake := startRelayPaced(b, env, dir, startImStub(b, env, dir), pace)
			db := env.open(b, "")
			w, err := outboxsql.New(outboxsql.Options{NodeID: "bench", GroupIDPrefix: groupIDPrefix, WakeSocket: wake})
			if err != nil {
				b.Fatal(err)
			}
			for n := 0; n < b.N; n++ {
				run := fmt.Sprintf("gosql-bench-%d", time.Now().UnixNano())
				var commits []time.Duration
				for i := 0; i < 200; i++ {
					id := fmt.Sprintf("%s-%d", run, i)
					began := time.Now()
					res, err := w.Commit(context.Background(), db, outboxsql.Command{CommandID: id,
						RoomID: fmt.Sprintf("%s-room-%d", run, i%20), CommandType: "SendGift", RoomSeq: int64(i)},
						[]outboxsql.Event{{EventID: id + "-gift", EventType: "RoomGiftSent", RoomSeq: int64(i),
							Payload: `{"gift":"rose"}`}}, nil)
					commits = append(commits, time.Since(began))
					if err != nil || res.Status != outboxsql.Committed {
						b.Fatalf("Commit %s: %+v, %v", id, res, err)
					}
				}
				eventually(b, 60*time.Second, "200 rows published", func() bool {
					return scalar(b, db, "SELECT COUNT(*) FROM room_outbox WHERE command_id LIKE ? AND status = 'published'", run+"-%") == 200
				})
				report(b, delays(b, db, run), commits)
			}
		})
	}
}

// delays are the insert -> published times of the run's rows, in ms, sorted.
func delays(b *testing.B, db *sql.DB, run string) []float64 {
	rows, err := db.Query("SELECT published_at_ms - created_at_ms FROM room_outbox WHERE command_id LIKE ?", run+"-%")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var ms float64
		if err := rows.Scan(&ms); err != nil {
			b.Fatal(err)
		}
		out = append(out, ms)
	}
	sort.Float64s(out)
	return out
}

func report(b *testing.B, published []float64, commits []time.Duration) {
	sort.Slice(commits, func(i, j int) bool { return commits[i] < commits[j] })
	at := func(q float64, n int) int { return int(q * float64(n-1)) }
	b.ReportMetric(published[at(0.5, len(published))], "published_p50_ms")
	b.ReportMetric(published[at(0.99, len(published))], "published_p99_ms")
	b.ReportMetric(float64(commits[at(0.5, len(commits))].Microseconds())/1000, "commit_p50_ms")
	b.ReportMetric(float64(commits[at(0.99, len(commits))].Microseconds())/1000, "commit_p99_ms")
}
