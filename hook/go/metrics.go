package roomoutbox

// #include <stdlib.h>
// #include <room_outbox/c.h>
import "C"

import (
	"net/http"
	"runtime"
	"time"
	"unsafe"
)

// Metrics is what a Hook counted since Open (room_outbox/hook_metrics.h; docs/hook.md,
// "Metrics"). Commits by outcome; the sync publish's IM requests by outcome; the pending events
// it did not try, by reason; the sync breaker; the rows left to outbox-relay; the marks published
// that failed after IM took the rows (waiting now, written late, dropped at the bound); the time
// in Commit.
type Metrics struct {
	CommitsCommitted, CommitsDuplicate, CommitsFailed, CommitsUnknown uint64

	SyncPublished, SyncFailed, SyncTimeout, SyncRateLimited uint64

	SyncSkippedSyncOff, SyncSkippedBreakerOpen, SyncSkippedQueueFull     uint64
	SyncSkippedRoomOrder, SyncSkippedOutOfTime, SyncSkippedCommandFailed uint64
	SyncSkippedRoomRefused                                               uint64

	SyncBreakerOpen bool
	RowsLeftToRelay uint64

	LateMarksWaiting, LateMarksWritten, LateMarksDropped uint64

	CommitDurationCount uint64
	CommitDurationSum   time.Duration
}

// Metrics returns the Hook's counts. Safe from any goroutine, also while a Commit runs: it never
// waits for one (a /metrics handler is not held up by a slow sync publish).
func (h *Hook) Metrics() (Metrics, error) {
	h.life.RLock()
	defer h.life.RUnlock()
	if len(h.all) == 0 {
		return Metrics{}, ErrClosed
	}
	var sum Metrics
	for _, c := range h.all {
		m, err := memberMetrics(c)
		if err != nil {
			return Metrics{}, err
		}
		sum.add(m)
	}
	runtime.KeepAlive(h)
	return sum, nil
}

// memberMetrics reads one member's counters.
func memberMetrics(c *C.room_outbox_hook) (Metrics, error) {
	var m C.room_outbox_hook_metrics
	var cerr *C.room_outbox_error
	if status := C.room_outbox_hook_metrics_get(c, &m, C.size_t(unsafe.Sizeof(m)), &cerr); status != C.ROOM_OUTBOX_OK {
		return Metrics{}, statusError(status, cerr)
	}
	return Metrics{
		CommitsCommitted: uint64(m.commits_committed), CommitsDuplicate: uint64(m.commits_duplicate),
		CommitsFailed: uint64(m.commits_failed), CommitsUnknown: uint64(m.commits_unknown),
		SyncPublished: uint64(m.sync_published), SyncFailed: uint64(m.sync_failed),
		SyncTimeout: uint64(m.sync_timeout), SyncRateLimited: uint64(m.sync_rate_limited),
		SyncSkippedSyncOff:       uint64(m.sync_skipped_sync_off),
		SyncSkippedBreakerOpen:   uint64(m.sync_skipped_breaker_open),
		SyncSkippedQueueFull:     uint64(m.sync_skipped_queue_full),
		SyncSkippedRoomOrder:     uint64(m.sync_skipped_room_order),
		SyncSkippedOutOfTime:     uint64(m.sync_skipped_out_of_time),
		SyncSkippedCommandFailed: uint64(m.sync_skipped_command_failed),
		SyncSkippedRoomRefused:   uint64(m.sync_skipped_room_refused),
		SyncBreakerOpen:          m.sync_breaker_open != 0,
		RowsLeftToRelay:          uint64(m.rows_left_to_relay),
		LateMarksWaiting:         uint64(m.late_marks_waiting),
		LateMarksWritten:         uint64(m.late_marks_written),
		LateMarksDropped:         uint64(m.late_marks_dropped),
		CommitDurationCount:      uint64(m.commit_duration_count),
		CommitDurationSum:        time.Duration(m.commit_duration_sum_us) * time.Microsecond,
	}, nil
}

// add sums another member's counters into m; the breaker, shared by the members, is open when
// any says so.
func (m *Metrics) add(o Metrics) {
	m.CommitsCommitted += o.CommitsCommitted
	m.CommitsDuplicate += o.CommitsDuplicate
	m.CommitsFailed += o.CommitsFailed
	m.CommitsUnknown += o.CommitsUnknown
	m.SyncPublished += o.SyncPublished
	m.SyncFailed += o.SyncFailed
	m.SyncTimeout += o.SyncTimeout
	m.SyncRateLimited += o.SyncRateLimited
	m.SyncSkippedSyncOff += o.SyncSkippedSyncOff
	m.SyncSkippedBreakerOpen += o.SyncSkippedBreakerOpen
	m.SyncSkippedQueueFull += o.SyncSkippedQueueFull
	m.SyncSkippedRoomOrder += o.SyncSkippedRoomOrder
	m.SyncSkippedOutOfTime += o.SyncSkippedOutOfTime
	m.SyncSkippedCommandFailed += o.SyncSkippedCommandFailed
	m.SyncSkippedRoomRefused += o.SyncSkippedRoomRefused
	m.SyncBreakerOpen = m.SyncBreakerOpen || o.SyncBreakerOpen
	m.RowsLeftToRelay += o.RowsLeftToRelay
	m.LateMarksWaiting += o.LateMarksWaiting
	m.LateMarksWritten += o.LateMarksWritten
	m.LateMarksDropped += o.LateMarksDropped
	m.CommitDurationCount += o.CommitDurationCount
	m.CommitDurationSum += o.CommitDurationSum
}

// MetricsText returns the Hook's metrics in the Prometheus text format, every sample labelled
// hook="<label>" unless label is empty: write it into the room service's own /metrics response
// (after its other families; a family may appear only once in a scrape, so render each Hook with
// a distinct label, or one label for the process). Safe from any goroutine, as Metrics.
func (h *Hook) MetricsText(label string) (string, error) {
	h.life.RLock()
	defer h.life.RUnlock()
	if len(h.all) == 0 {
		return "", ErrClosed
	}
	// The members in C memory (cgo refuses a Go pointer to Go pointers): the text sums them.
	members := len(h.all)
	hooks := (**C.room_outbox_hook)(C.malloc(C.size_t(members) * C.size_t(unsafe.Sizeof(h.all[0]))))
	defer C.free(unsafe.Pointer(hooks))
	copy(unsafe.Slice(hooks, members), h.all)
	clabel := C.CString(label)
	defer C.free(unsafe.Pointer(clabel))
	buf := make([]byte, 4096)
	for {
		var n C.size_t
		var cerr *C.room_outbox_error
		status := C.room_outbox_hook_metrics_text(hooks, C.size_t(members), clabel, C.size_t(len(label)),
			(*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &n, &cerr)
		if status != C.ROOM_OUTBOX_OK {
			return "", statusError(status, cerr)
		}
		if int(n) < len(buf) {
			runtime.KeepAlive(h)
			return string(buf[:n]), nil
		}
		buf = make([]byte, int(n)+1024) // the counts may grow between two calls
	}
}

// MetricsHandler serves the Hook's metrics (MetricsText(label)) in the Prometheus text format: a
// /metrics endpoint of the hook's families alone, e.g. mux.Handle("/metrics", hook.MetricsHandler("")).
// A closed Hook answers 503. To serve the service's own families in the same scrape, write them
// and MetricsText into one response instead.
func (h *Hook) MetricsHandler(label string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text, err := h.MetricsText(label)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_, _ = w.Write([]byte(text))
	})
}
