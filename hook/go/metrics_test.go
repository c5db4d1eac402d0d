package roomoutbox_test

import (
	"strings"
	"testing"
)

func TestMetricsCountCommitsByOutcome(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-metrics")
	for i := 0; i < 2; i++ { // committed, then duplicate
		if _, err := hook.Commit(cmd, events, nil); err != nil {
			t.Fatalf("Commit %d: %v", i, err)
		}
	}
	m, err := hook.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	if m.CommitsCommitted != 1 || m.CommitsDuplicate != 1 || m.CommitsFailed != 0 ||
		m.SyncPublished != 1 || m.RowsLeftToRelay != 0 || m.SyncBreakerOpen ||
		m.SyncSkippedRoomRefused != 0 || m.LateMarksWaiting != 0 || m.LateMarksWritten != 0 ||
		m.CommitDurationCount != 2 || m.CommitDurationSum <= 0 {
		t.Fatalf("metrics %+v: want 1 committed, 1 duplicate, 1 published, nothing left, 2 timed", m)
	}
	text, err := hook.MetricsText("go")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`room_outbox_hook_commits_total{hook="go",outcome="committed"} 1`,
		`room_outbox_hook_commits_total{hook="go",outcome="duplicate"} 1`,
		`room_outbox_hook_sync_publishes_total{hook="go",outcome="published"} 1`,
		`room_outbox_hook_sync_breaker_open{hook="go"} 0`,
		`room_outbox_hook_sync_skipped_total{hook="go",reason="room_refused"} 0`,
		`room_outbox_hook_late_marks_waiting{hook="go"} 0`,
		`room_outbox_hook_late_marks_written_total{hook="go"} 0`,
		`room_outbox_hook_late_marks_dropped_total{hook="go"} 0`,
	} {
		if !strings.Contains(text, line+"\n") {
			t.Fatalf("MetricsText lacks %q:\n%s", line, text)
		}
	}
	if err := hook.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := hook.MetricsText(""); err == nil {
		t.Fatalf("MetricsText after Close: no error")
	}
}
