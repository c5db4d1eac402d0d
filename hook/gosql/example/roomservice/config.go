// Package roomservice is a small room service on package outboxsql, built without cgo: one HTTP
// endpoint that applies a SendGift command to a room's state and writes its events in the same
// transaction, for outbox-relay to deliver to Tencent IM.
package roomservice

import (
	"errors"
	"fmt"
)

// Config is the service's environment.
type Config struct {
	MySQLDSN      string // ROOM_SERVICE_MYSQL_DSN: a go-sql-driver/mysql DSN (required)
	Listen        string // ROOM_SERVICE_LISTEN: the HTTP address, ":8080" by default
	WakeSocket    string // ROOM_OUTBOX_WAKE_SOCKET: the relay's [wake] socket (optional)
	GroupIDPrefix string // ROOM_OUTBOX_GROUP_ID_PREFIX: the relay's group_id_prefix (optional)
}

// DefaultListen is ROOM_SERVICE_LISTEN's default.
const DefaultListen = ":8080"

// ConfigFromEnv reads the Config through getenv (os.Getenv in main).
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		MySQLDSN:      getenv("ROOM_SERVICE_MYSQL_DSN"),
		Listen:        getenv("ROOM_SERVICE_LISTEN"),
		WakeSocket:    getenv("ROOM_OUTBOX_WAKE_SOCKET"),
		GroupIDPrefix: getenv("ROOM_OUTBOX_GROUP_ID_PREFIX"),
	}
	if c.MySQLDSN == "" {
		return c, errors.New("ROOM_SERVICE_MYSQL_DSN is not set: a go-sql-driver/mysql DSN, " +
			"e.g. room_service:PASSWORD@tcp(mysql:3306)/room_outbox")
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.WakeSocket != "" && c.WakeSocket[0] != '/' {
		return c, fmt.Errorf("ROOM_OUTBOX_WAKE_SOCKET must be an absolute path, got %q", c.WakeSocket)
	}
	return c, nil
}
