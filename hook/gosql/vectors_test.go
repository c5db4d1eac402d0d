package outboxsql

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// text is a string of testdata/commit_vectors.json: a JSON string, {"hex": H} or
// {"parts": [...]} (strings, {"hex": H}, {"repeat": S, "times": N}).
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = text(s)
		return nil
	}
	var form struct {
		Hex    *string           `json:"hex"`
		Repeat *string           `json:"repeat"`
		Times  int               `json:"times"`
		Parts  []json.RawMessage `json:"parts"`
	}
	if err := json.Unmarshal(b, &form); err != nil {
		return err
	}
	switch {
	case form.Hex != nil:
		raw, err := hex.DecodeString(*form.Hex)
		*t = text(raw)
		return err
	case form.Repeat != nil:
		*t = text(strings.Repeat(*form.Repeat, form.Times))
		return nil
	}
	var all strings.Builder
	for _, p := range form.Parts {
		var part text
		if err := part.UnmarshalJSON(p); err != nil {
			return err
		}
		all.WriteString(string(part))
	}
	*t = text(all.String())
	return nil
}

type vector struct {
	Name    string `json:"name"`
	Options struct {
		NodeID         text                `json:"node_id"`
		GroupIDPrefix  text                `json:"group_id_prefix"`
		SkipEventTypes []string            `json:"skip_event_types"`
		MaxBodyBytes   int                 `json:"max_body_bytes"`
		MsgPriority    Priority            `json:"msg_priority"`
		PriorityByType map[string]Priority `json:"priority_by_type"`
	} `json:"options"`
	Command struct {
		CommandID   text  `json:"command_id"`
		RoomID      text  `json:"room_id"`
		CommandType text  `json:"command_type"`
		RequestID   text  `json:"request_id"`
		RoomSeq     int64 `json:"room_seq"`
		Payload     text  `json:"payload"`
	} `json:"command"`
	Events []struct {
		EventID      text  `json:"event_id"`
		EventType    text  `json:"event_type"`
		RoomSeq      int64 `json:"room_seq"`
		OccurredAtMs int64 `json:"occurred_at_ms"`
		Payload      text  `json:"payload"`
	} `json:"events"`
	Rows []struct {
		Envelope  text   `json:"envelope"`
		Status    string `json:"status"`
		BodyBytes int    `json:"body_bytes"`
	} `json:"rows"`
	Error       *string `json:"error"`
	ErrorPrefix *string `json:"error_prefix"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("testdata/commit_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vectors []vector `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("testdata/commit_vectors.json: %v", err)
	}
	if len(doc.Vectors) == 0 {
		t.Fatal("testdata/commit_vectors.json holds no vector")
	}
	return doc.Vectors
}

func (v *vector) inputs() (Options, Command, []Event) {
	o := Options{NodeID: string(v.Options.NodeID), GroupIDPrefix: string(v.Options.GroupIDPrefix),
		SkipEventTypes: v.Options.SkipEventTypes, MaxBodyBytes: v.Options.MaxBodyBytes,
		MsgPriority: v.Options.MsgPriority, PriorityByType: v.Options.PriorityByType}
	c := v.Command
	cmd := Command{CommandID: string(c.CommandID), RoomID: string(c.RoomID), CommandType: string(c.CommandType),
		RequestID: string(c.RequestID), RoomSeq: c.RoomSeq, Payload: string(c.Payload)}
	var events []Event
	for _, e := range v.Events {
		events = append(events, Event{EventID: string(e.EventID), EventType: string(e.EventType),
			RoomSeq: e.RoomSeq, OccurredAtMs: e.OccurredAtMs, Payload: string(e.Payload)})
	}
	return o, cmd, events
}

// The vectors the C++ hook's unit test reads too (tests/unit/commit_vectors_test.cc): the same
// rows, byte for byte, and the same refusals with the same messages.
func TestSharedVectorsGiveTheHooksRowsAndRefusals(t *testing.T) {
	for _, v := range loadVectors(t) {
		v := v
		t.Run(v.Name, func(t *testing.T) {
			o, cmd, events := v.inputs()
			w, err := New(o)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			p, err := prepare(&w.opts, cmd, events, 1)
			if v.Error != nil || v.ErrorPrefix != nil {
				checkRefusal(t, &v, err)
				if werr := w.Check(cmd, events); werr == nil || werr.Error() != err.Error() {
					t.Fatalf("Check: %v, want the refusal %v", werr, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			checkRows(t, &v, w, p)
		})
	}
}

func checkRefusal(t *testing.T, v *vector, err error) {
	t.Helper()
	e, ok := err.(*Error)
	if !ok || e.Code != CodeInvalidArgument {
		t.Fatalf("got %v, want an *Error with CodeInvalidArgument", err)
	}
	if v.Error != nil && e.Message != *v.Error {
		t.Fatalf("message\n got %q\nwant %q", e.Message, *v.Error)
	}
	if v.ErrorPrefix != nil && !strings.HasPrefix(e.Message, *v.ErrorPrefix) {
		t.Fatalf("message %q does not start with %q", e.Message, *v.ErrorPrefix)
	}
}

func checkRows(t *testing.T, v *vector, w *Writer, p *prepared) {
	t.Helper()
	if len(p.rows) != len(v.Rows) {
		t.Fatalf("%d rows, want %d", len(p.rows), len(v.Rows))
	}
	for i, want := range v.Rows {
		row := p.rows[i]
		if string(row.envelope) != string(want.Envelope) {
			t.Fatalf("row %d envelope\n got %s\nwant %s", i, row.envelope, want.Envelope)
		}
		status := map[bool]string{true: "published", false: "pending"}[row.published]
		if status != want.Status {
			t.Fatalf("row %d: %s, want %s", i, status, want.Status)
		}
		if row.published {
			continue
		}
		f := envelopeFields{eventID: row.eventID, eventType: row.eventType, roomID: p.cmd.RoomID}
		body := sendGroupMsgBody(w.opts.GroupIDPrefix, &f, row.envelope, w.opts.priorityFor(row.eventType))
		if len(body) != want.BodyBytes {
			t.Fatalf("row %d: body of %d bytes, want %d", i, len(body), want.BodyBytes)
		}
		if !json.Valid(body) {
			t.Fatalf("row %d: the body is not JSON: %s", i, body)
		}
	}
}
