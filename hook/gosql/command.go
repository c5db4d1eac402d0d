package outboxsql

import "fmt"

// Command is one command the room service applied, as the hook's Command.
type Command struct {
	CommandID   string // the idempotency key: a repeated CommandID writes nothing (Duplicate)
	RoomID      string
	CommandType string // e.g. "SendGift"
	RequestID   string // tracing only
	RoomSeq     int64  // the room's version after the command
	Payload     string // JSON object text stored in the command log; "" means "{}"
}

// Event is one event the command produced; its room, command, request and node come from the
// Command and the Options.
type Event struct {
	EventID      string // unique; clients dedupe by it
	EventType    string // e.g. "RoomGiftSent"
	RoomSeq      int64  // the room's version this event reflects
	OccurredAtMs int64  // Unix epoch ms (information for clients); 0 means the host's now
	Payload      string // JSON object text; "" means "{}"
}

// Status is what became of a command.
type Status int

const (
	// Written: Write put the command log row and the outbox rows into the transaction; they are
	// the relay's once the transaction commits.
	Written Status = iota
	// Committed: Commit committed the command and its rows.
	Committed
	// Duplicate: CommandID was committed before; nothing was written. Roll the transaction back
	// (Commit does): the command was applied already.
	Duplicate
	// Failed: Commit rolled the command back; nothing of it was committed.
	Failed
	// Unknown: Commit sent COMMIT, its answer was lost and the lookup that would tell failed.
	// Commit again with the same CommandID.
	Unknown
)

func (s Status) String() string {
	switch s {
	case Written:
		return "written"
	case Committed:
		return "committed"
	case Duplicate:
		return "duplicate"
	case Failed:
		return "failed"
	case Unknown:
		return "unknown"
	}
	return "status(?)"
}

// DeliveryState is how an event's row was written.
type DeliveryState int

const (
	// Pending: written pending and due at once, for outbox-relay to deliver.
	Pending DeliveryState = iota
	// Skipped: a type never sent to IM (Options.SkipEventTypes), written published.
	Skipped
)

func (s DeliveryState) String() string {
	if s == Skipped {
		return "skipped"
	}
	return "pending"
}

// MarshalText writes the state's name ("pending", "skipped"), e.g. in JSON.
func (s DeliveryState) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a name MarshalText wrote.
func (s *DeliveryState) UnmarshalText(text []byte) error {
	switch string(text) {
	case "pending":
		*s = Pending
	case "skipped":
		*s = Skipped
	default:
		return fmt.Errorf("outboxsql: unknown delivery state %q", text)
	}
	return nil
}

// EventDelivery is one event's row.
type EventDelivery struct {
	EventID string        `json:"event_id"`
	State   DeliveryState `json:"state"`
}

// Result of Write and Commit. Events has one entry per event, in order, when the rows were
// written (Written, Committed).
type Result struct {
	Status Status
	Events []EventDelivery
}

// pending reports whether any row was written pending (the relay has something to do).
func (r Result) pending() bool {
	for _, e := range r.Events {
		if e.State == Pending {
			return true
		}
	}
	return false
}

func payloadOf(p string) string {
	if p == "" {
		return "{}"
	}
	return p
}
