package main

import (
	"fmt"
	"net/http"
	"sync/atomic"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// commandsHandled is one of the room service's own metrics, served beside the hook's.
var commandsHandled atomic.Uint64

// MetricsHandler serves the room service's /metrics: its own families first, then the hook's
// (Hook.MetricsText), labelled hook="<label>". One MetricsText call per Hook, each with its own
// label: a family may appear only once in a scrape.
func MetricsHandler(hook *roomoutbox.Hook, label string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		text, err := hook.MetricsText(label)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		fmt.Fprintf(w, "# HELP room_service_commands_total Commands the room service handled.\n"+
			"# TYPE room_service_commands_total counter\nroom_service_commands_total %d\n",
			commandsHandled.Load())
		fmt.Fprint(w, text)
	})
}
