// Command room-service is the smallest service module on the roomoutbox package, built by
// hook/go/run-go-test.sh: it proves the module path with the replace directive of go.mod, as
// docs/hook.md tells a service to write it, builds against the published API (Command, Event,
// WithPoolSize, CommitContext, Tx.ExecAffected).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

var errLostRace = errors.New("another command moved the room first")

func main() {
	hook, err := roomoutbox.Open(os.Getenv("ROOM_OUTBOX_CONFIG"), roomoutbox.WithPoolSize(8))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer hook.Close()
	cmd := roomoutbox.Command{CommandID: "cmd-42", RoomID: "room-7", CommandType: "SendGift",
		RequestID: "req-9", RoomSeq: 12, Payload: `{"user_id":"u1","gift":"rose"}`}
	events := []roomoutbox.Event{{EventID: "evt-42-0", EventType: "RoomGiftSent", RoomSeq: 12,
		Payload: `{"gift":"rose"}`}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res, err := hook.CommitContext(ctx, cmd, events, func(tx roomoutbox.Tx) error {
		n, err := tx.ExecAffected("UPDATE room_snapshot SET room_seq = ? WHERE room_id = ? AND room_seq = ?",
			12, "room-7", 11)
		if err == nil && n != 1 {
			err = errLostRace
		}
		return err
	})
	fmt.Println(res.Status, err)
}
