// Command room-service is the example room service of package outboxsql (no cgo):
//
//	ROOM_SERVICE_MYSQL_DSN='room_service:PASSWORD@tcp(mysql:3306)/room_outbox' \
//	ROOM_SERVICE_LISTEN=:8080 ROOM_OUTBOX_WAKE_SOCKET=/run/outbox-relay/wake.sock room-service
//
// GET /healthz answers 200; POST /rooms/{room_id}/gifts commits a SendGift command with a
// RoomGiftSent event (roomservice.Server). It creates its own table (room_gift_state) at start;
// the outbox tables must exist (outbox-relay migrate). SIGTERM or SIGINT: it stops accepting,
// finishes the requests under way (at most 10 s) and exits 0. Exit 2: bad environment; 1: the
// database or the listener failed.
package main

import (
	"context"
	"database/sql"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
	"github.com/room-outbox/room-outbox/hook/gosql/example/roomservice"
)

func main() {
	cfg, err := roomservice.ConfigFromEnv(os.Getenv)
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}
	writer, err := outboxsql.New(outboxsql.Options{WakeSocket: cfg.WakeSocket, GroupIDPrefix: cfg.GroupIDPrefix})
	if err != nil {
		log.Print(err)
		os.Exit(2)
	}
	db, err := sql.Open("mysql", cfg.MySQLDSN)
	if err != nil {
		log.Print("ROOM_SERVICE_MYSQL_DSN: ", err)
		os.Exit(2)
	}
	defer db.Close()
	if err := roomservice.CreateSchema(context.Background(), db); err != nil {
		log.Print("create room_gift_state: ", err)
		os.Exit(1)
	}
	srv := &http.Server{Addr: cfg.Listen, Handler: roomservice.NewServer(db, writer),
		ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		<-stop
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // requests still running after 10 s are cut
	}()
	log.Printf("room-service: listening on %s (wake socket %q)", cfg.Listen, cfg.WakeSocket)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Print(err)
		os.Exit(1)
	}
	<-drained
	log.Print("room-service: stopped")
}
