package outboxsql

import "fmt"

// outboxRow is one room_outbox row to insert.
type outboxRow struct {
	eventID, eventType string
	envelope           []byte
	published          bool // a type never sent to IM: written published
}

// prepared is what a commit writes, built and checked before any statement runs.
type prepared struct {
	cmd  Command
	rows []outboxRow
}

// prepare runs the hook's checks in the hook's order (CheckCommand, then each event's envelope
// and IM body: hook/src/commit_prepare.cc) and builds the rows. nowMs is the default
// occurred_at_ms.
func prepare(o *Options, cmd Command, events []Event, nowMs int64) (*prepared, error) {
	cmd.Payload = payloadOf(cmd.Payload)
	if err := checkCommand(o, &cmd, events); err != nil {
		return nil, err
	}
	p := &prepared{cmd: cmd, rows: make([]outboxRow, 0, len(events))}
	for i := range events {
		e := &events[i]
		f := envelopeFields{eventID: e.EventID, eventType: e.EventType, roomID: cmd.RoomID,
			roomSeq: e.RoomSeq, commandID: cmd.CommandID, requestID: cmd.RequestID,
			nodeID: o.NodeID, occurredAtMs: e.OccurredAtMs, payload: payloadOf(e.Payload)}
		if f.occurredAtMs <= 0 {
			f.occurredAtMs = nowMs
		}
		envelope, err := encodeEnvelope(&f)
		if err != nil {
			return nil, err
		}
		published := !o.sends(e.EventType)
		if !published {
			if err := checkBodySize(o, &f, envelope); err != nil {
				return nil, err
			}
		}
		p.rows = append(p.rows, outboxRow{eventID: e.EventID, eventType: e.EventType,
			envelope: envelope, published: published})
	}
	return p, nil
}

// checkBodySize refuses an event whose IM request body would exceed MaxBodyBytes: Tencent
// refuses such a body forever (80002).
func checkBodySize(o *Options, f *envelopeFields, envelope []byte) error {
	n := len(sendGroupMsgBody(o.GroupIDPrefix, f, envelope, o.priorityFor(f.eventType)))
	if n > o.MaxBodyBytes {
		return invalid(fmt.Sprintf("event %s: the IM request body would be %d bytes, over [tencent_im] max_body_bytes %d",
			f.eventID, n, o.MaxBodyBytes))
	}
	return nil
}

// result is the Result of the prepared rows with status s.
func (p *prepared) result(s Status) Result {
	r := Result{Status: s, Events: make([]EventDelivery, len(p.rows))}
	for i, row := range p.rows {
		r.Events[i] = EventDelivery{EventID: row.eventID}
		if row.published {
			r.Events[i].State = Skipped
		}
	}
	return r
}
