package dbtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
)

// The relay polls every 30 s: rows delivered well within that were woken by the package.
const wokenWithin = 20 * time.Second

// Rows written by the package in the service's own transactions, delivered by a real relay to
// the IM stand-in: every room in commit order, each body's Data the row's envelope byte for byte,
// the rows marked as the contract says, the skipped type never sent.
func TestARealRelayDeliversWhatTheWriterCommittedRoomByRoomInOrder(t *testing.T) {
	env := environment(t)
	dir := t.TempDir()
	im := startImStub(t, env, dir)
	began := time.Now()
	wake := startRelay(t, env, dir, im)
	t.Logf("relay ready (wake socket bound) after %s", time.Since(began).Round(time.Millisecond))
	db := env.open(t, "")
	w, err := outboxsql.New(outboxsql.Options{NodeID: "gosql-room-service", GroupIDPrefix: groupIDPrefix, WakeSocket: wake})
	if err != nil {
		t.Fatal(err)
	}
	rooms := []string{"gosql-relay-a", "gosql-relay-b", "gosql-relay-c"}
	want := map[string][]string{}
	for seq := int64(1); seq <= 3; seq++ {
		for _, room := range rooms {
			cmd := outboxsql.Command{CommandID: fmt.Sprintf("%s-cmd-%d", room, seq), RoomID: room,
				CommandType: "SendGift", RequestID: fmt.Sprintf("req-%d", seq), RoomSeq: seq,
				Payload: `{"user_id":"u1","gift":"rose"}`}
			events := []outboxsql.Event{
				{EventID: cmd.CommandID + "-join", EventType: "RoomUserJoined", RoomSeq: seq, Payload: `{"user_id":"u1"}`},
				{EventID: cmd.CommandID + "-heat", EventType: "RoomHeatChanged", RoomSeq: seq, Payload: `{"heat":1}`},
				{EventID: cmd.CommandID + "-gift", EventType: "RoomGiftSent", RoomSeq: seq, Payload: `{"gift":"rose","n":1.50}`},
			}
			res, err := w.Commit(context.Background(), db, cmd, events, nil)
			if err != nil || res.Status != outboxsql.Committed || len(res.Events) != 3 ||
				res.Events[0].State != outboxsql.Pending || res.Events[1].State != outboxsql.Skipped {
				t.Fatalf("Commit %s: %+v, %v", cmd.CommandID, res, err)
			}
			want[groupIDPrefix+room] = append(want[groupIDPrefix+room], cmd.CommandID+"-join", cmd.CommandID+"-gift")
		}
	}
	published := func() int64 {
		return scalar(t, db, "SELECT COUNT(*) FROM room_outbox WHERE event_id LIKE 'gosql-relay-%' AND status = 'published'")
	}
	committed := time.Now()
	eventually(t, wokenWithin, "27 rows published", func() bool { return published() == 27 })
	t.Logf("18 rows for IM and 9 skipped published %s after the last commit", time.Since(committed).Round(time.Millisecond))

	got := map[string][]string{}
	rows := envelopes(t, db, "gosql-relay-%")
	for _, r := range im.requests(t) {
		if !strings.HasPrefix(r.GroupID, groupIDPrefix+"gosql-relay-") {
			continue
		}
		if !r.Delivered || len(r.EventIDs) != 1 {
			t.Fatalf("request %+v: want one event, delivered", r)
		}
		got[r.GroupID] = append(got[r.GroupID], r.EventIDs[0])
		checkBodyCarriesTheRow(t, r, rows[r.EventIDs[0]])
	}
	for group, ids := range want {
		if strings.Join(got[group], ",") != strings.Join(ids, ",") {
			t.Fatalf("%s received %v, want %v (commit order, the skipped type never sent)", group, got[group], ids)
		}
	}
	if n := scalar(t, db, "SELECT COUNT(*) FROM room_outbox WHERE event_id LIKE 'gosql-relay-%' AND "+
		"retry_count = 0 AND last_error IS NULL AND claim_token IS NULL AND published_at_ms >= created_at_ms"); n != 27 {
		t.Fatalf("%d of 27 rows marked as the contract says", n)
	}
}

// checkBodyCarriesTheRow: the message's Data is the row's envelope column, byte for byte.
func checkBodyCarriesTheRow(t *testing.T, r imRequest, envelope string) {
	t.Helper()
	var body struct {
		MsgBody []struct {
			MsgContent struct{ Data, Desc, Ext string }
		}
	}
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil || len(body.MsgBody) != 1 {
		t.Fatalf("body %q: %v", r.Body, err)
	}
	if c := body.MsgBody[0].MsgContent; c.Data != envelope || c.Ext != r.EventIDs[0] {
		t.Fatalf("IM got Data %q Ext %q; the row holds %q", c.Data, c.Ext, envelope)
	}
}
