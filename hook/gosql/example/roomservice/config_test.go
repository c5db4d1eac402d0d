package roomservice

import (
	"strings"
	"testing"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestConfigFromEnvironment(t *testing.T) {
	c, err := ConfigFromEnv(env(map[string]string{"ROOM_SERVICE_MYSQL_DSN": "u:p@tcp(mysql:3306)/room_outbox"}))
	if err != nil || c.Listen != ":8080" || c.WakeSocket != "" || c.MySQLDSN != "u:p@tcp(mysql:3306)/room_outbox" {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	c, err = ConfigFromEnv(env(map[string]string{"ROOM_SERVICE_MYSQL_DSN": "d", "ROOM_SERVICE_LISTEN": "127.0.0.1:9000",
		"ROOM_OUTBOX_WAKE_SOCKET": "/run/outbox-relay/wake.sock", "ROOM_OUTBOX_GROUP_ID_PREFIX": "live_"}))
	if err != nil || c.Listen != "127.0.0.1:9000" || c.WakeSocket != "/run/outbox-relay/wake.sock" || c.GroupIDPrefix != "live_" {
		t.Fatalf("set: %+v, %v", c, err)
	}
	if _, err := ConfigFromEnv(env(nil)); err == nil || !strings.Contains(err.Error(), "ROOM_SERVICE_MYSQL_DSN is not set") {
		t.Fatalf("no DSN: %v", err)
	}
	if _, err := ConfigFromEnv(env(map[string]string{"ROOM_SERVICE_MYSQL_DSN": "d", "ROOM_OUTBOX_WAKE_SOCKET": "wake.sock"})); err == nil ||
		!strings.Contains(err.Error(), "ROOM_OUTBOX_WAKE_SOCKET must be an absolute path") {
		t.Fatalf("relative wake socket: %v", err)
	}
}

func TestGiftsPath(t *testing.T) {
	for path, want := range map[string]string{"/rooms/room-7/gifts": "room-7", "/rooms//gifts": "",
		"/rooms/a/b/gifts": "", "/rooms/room-7": "", "/rooms/room-7/gifts/x": ""} {
		if got, ok := giftsPath(path); got != want || ok != (want != "") {
			t.Errorf("giftsPath(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}
