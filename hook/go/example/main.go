// Command example is a small room service on the roomoutbox package: one room, a few users
// join and send gifts, each command through Pipeline (pipeline.go). It needs the outbox schema
// (schema/*.sql) and the room_snapshot table (sim/room_snapshot.sql) in the configured database,
// and prints one JSON line per command.
//
//	go run ./example -config /etc/room-outbox/relay.toml -room room-1
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

func main() {
	config := flag.String("config", "", "relay.toml to read [mysql], [tencent_im], [hook] from")
	room := flag.String("room", "room-1", "room id")
	metrics := flag.String("metrics", "", "host:port to serve /metrics on while running (empty: none)")
	flag.Parse()
	hook, err := roomoutbox.Open(*config, roomoutbox.WithLogger(func(l roomoutbox.Level, line string) {
		log.Printf("%s: %s", l, line)
	}))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer hook.Close()
	if *metrics != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", MetricsHandler(hook, "example"))
		go func() { log.Print(http.ListenAndServe(*metrics, mux)) }()
	}
	p := &Pipeline{Cell: NewRoomCell(), Hook: hook}
	run := time.Now().UnixNano()
	for i, c := range []RoomCommand{
		{Type: "JoinRoom", UserID: "alice"},
		{Type: "JoinRoom", UserID: "bob"},
		{Type: "SendGift", UserID: "alice", Gift: "rose"},
	} {
		c.RoomID = *room
		c.CommandID = fmt.Sprintf("example-%d-%d", run, i)
		c.RequestID = fmt.Sprintf("req-%d", i)
		res, err := p.Handle(c)
		commandsHandled.Add(1)
		line, _ := json.Marshal(map[string]interface{}{"command_id": c.CommandID, "status": res.Status.String(),
			"events": res.Events, "error": fmt.Sprint(err)})
		fmt.Println(string(line))
		if err != nil {
			os.Exit(1)
		}
	}
}
