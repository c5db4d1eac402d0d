package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// The room service's /metrics serves its own families and the hook's, after a commit on a hook
// whose IM is down: the row left to the relay is there to see.
func TestMetricsHandlerServesTheHooksSeries(t *testing.T) {
	hook := open(t, false)
	cmd := roomoutbox.Command{CommandID: "go-example-metrics", RoomID: "go-example-metrics-room",
		CommandType: "SendGift", RoomSeq: 1, Payload: "{}"}
	events := []roomoutbox.Event{{EventID: "go-example-metrics-gift", EventType: "RoomGiftSent", RoomSeq: 1, Payload: "{}"}}
	if res, err := hook.Commit(cmd, events, nil); err != nil || res.Status != roomoutbox.Committed {
		t.Fatalf("Commit: %+v, %v", res, err)
	}
	commandsHandled.Add(1)
	server := httptest.NewServer(MetricsHandler(hook, "example"))
	defer server.Close()
	resp, err := http.Get(server.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	text := string(body)
	for _, line := range []string{
		"room_service_commands_total 1\n",
		`room_outbox_hook_commits_total{hook="example",outcome="committed"} 1` + "\n",
		`room_outbox_hook_rows_left_to_relay_total{hook="example"} 1` + "\n",
		`room_outbox_hook_commit_duration_seconds_count{hook="example"} 1` + "\n",
	} {
		if !strings.Contains(text, line) {
			t.Fatalf("/metrics lacks %q:\n%s", line, text)
		}
	}
	t.Logf("a room service's /metrics:\n%s", text)
}
