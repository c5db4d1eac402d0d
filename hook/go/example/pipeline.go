package main

import (
	"encoding/json"
	"fmt"
	"time"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// RoomState is a room as the Room Cell holds it in memory.
type RoomState struct {
	RoomID  string          `json:"room_id"`
	Seq     int64           `json:"seq"`
	Members map[string]bool `json:"members"`
	Heat    int64           `json:"heat"`
}

// RoomCommand is a command a client sent to the room.
type RoomCommand struct {
	CommandID string // the client's idempotency key
	RequestID string
	RoomID    string
	Type      string // "JoinRoom" or "SendGift"
	UserID    string
	Gift      string
}

// RoomCell owns the in-memory state of its rooms; it is the one writer of each (so each room's
// events are committed in order).
type RoomCell struct {
	rooms map[string]RoomState
}

func NewRoomCell() *RoomCell { return &RoomCell{rooms: map[string]RoomState{}} }

func (c *RoomCell) Room(id string) RoomState {
	if r, ok := c.rooms[id]; ok {
		return r
	}
	return RoomState{RoomID: id, Members: map[string]bool{}}
}

// Apply computes the room's next state and the command's events without changing the cell: the
// state is replaced only once the command is committed.
func (c *RoomCell) Apply(cmd RoomCommand) (RoomState, []roomoutbox.Event, error) {
	cur := c.Room(cmd.RoomID)
	next := RoomState{RoomID: cur.RoomID, Seq: cur.Seq + 1, Heat: cur.Heat, Members: map[string]bool{}}
	for m := range cur.Members {
		next.Members[m] = true
	}
	var events []roomoutbox.Event
	event := func(typ string, payload interface{}) {
		body, _ := json.Marshal(payload)
		events = append(events, roomoutbox.Event{
			EventID:   fmt.Sprintf("%s-%d", cmd.CommandID, len(events)),
			EventType: typ, RoomSeq: next.Seq, Payload: string(body)})
	}
	switch cmd.Type {
	case "JoinRoom":
		next.Members[cmd.UserID] = true
		event("RoomUserJoined", map[string]string{"user_id": cmd.UserID})
	case "SendGift":
		if !cur.Members[cmd.UserID] {
			return cur, nil, fmt.Errorf("%s is not in room %s", cmd.UserID, cmd.RoomID)
		}
		next.Heat += 10
		event("RoomGiftSent", map[string]string{"user_id": cmd.UserID, "gift": cmd.Gift})
		event("RoomHeatChanged", map[string]int64{"heat": next.Heat}) // never sent to IM
	default:
		return cur, nil, fmt.Errorf("unknown command type %q", cmd.Type)
	}
	return next, events, nil
}

// Pipeline is the room service's command path:
//
//	apply the command in the Room Cell
//	  -> commit: command log + room_outbox rows (pending) + the room snapshot, one transaction
//	  -> replace the in-memory room state
//	  -> sync publish to Tencent IM (inside Commit): published, or left pending for outbox-relay
type Pipeline struct {
	Cell *RoomCell
	Hook roomoutbox.Committer // a *roomoutbox.Hook; roomoutboxtest.Hook in unit tests
}

// Handle runs one command through the pipeline. An IM failure never fails the command: its
// events are then Pending and outbox-relay delivers them.
func (p *Pipeline) Handle(cmd RoomCommand) (roomoutbox.Result, error) {
	next, events, err := p.Cell.Apply(cmd)
	if err != nil {
		return roomoutbox.Result{Status: roomoutbox.Failed}, err
	}
	state, err := json.Marshal(next)
	if err != nil {
		return roomoutbox.Result{Status: roomoutbox.Failed}, err
	}
	res, err := p.Hook.Commit(roomoutbox.Command{
		CommandID: cmd.CommandID, RoomID: cmd.RoomID, CommandType: cmd.Type,
		RequestID: cmd.RequestID, RoomSeq: next.Seq, Payload: commandPayload(cmd),
	}, events, func(tx roomoutbox.Tx) error {
		return tx.Exec("INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) "+
			"VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE room_seq = VALUES(room_seq), "+
			"state = VALUES(state), updated_at_ms = VALUES(updated_at_ms)",
			next.RoomID, next.Seq, string(state), time.Now().UnixMilli())
	})
	if err != nil {
		// Failed: nothing was written. Unknown: the command may have committed; the caller
		// retries with the same CommandID (Duplicate then means it had).
		return res, err
	}
	if res.Status == roomoutbox.Committed {
		p.Cell.rooms[next.RoomID] = next
	}
	return res, nil
}

func commandPayload(cmd RoomCommand) string {
	body, _ := json.Marshal(map[string]string{"user_id": cmd.UserID, "gift": cmd.Gift})
	return string(body)
}
