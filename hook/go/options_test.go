package roomoutbox_test

import (
	"bytes"
	"errors"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	roomoutbox "github.com/room-outbox/room-outbox/hook/go"
)

// Typed options set their relay.toml keys, and Open refuses a bad value naming the key as it
// does for WithSetting.
func TestTypedOptionsAreCheckedAsTheirKeys(t *testing.T) {
	env := environment(t)
	for _, c := range []struct {
		opt  roomoutbox.Option
		want string
	}{
		{roomoutbox.WithMySQLPort(0), "mysql.port: must be 1..65535, got 0"},
		{roomoutbox.WithSyncPublish("sideways"), "hook.sync_publish"},
		{roomoutbox.WithWakeSocket("relative.sock"), "wake.socket"},
	} {
		_, err := roomoutbox.Open(env.UpConfig, c.opt)
		if !errors.Is(err, roomoutbox.ErrInvalidArgument) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open: %v, want CodeInvalidArgument naming %q", err, c.want)
		}
	}
	hook := openUp(t, env, roomoutbox.WithMySQLSocket(env.Socket), roomoutbox.WithMySQLDatabase(env.Database),
		roomoutbox.WithSyncPublish(roomoutbox.SyncOff), roomoutbox.WithSyncPublishTimeout(250*time.Millisecond),
		roomoutbox.WithSkipEventTypes("RoomGiftSent"), roomoutbox.WithNodeID("typed-node"))
	cmd, events := giftCommand("go-typed")
	res, err := hook.Commit(cmd, events, nil)
	if err != nil || res.Events[0].State != roomoutbox.Skipped || res.Events[1].State != roomoutbox.Pending {
		t.Fatalf("Commit: %+v, %v; want the gift skipped and the heat pending (sync publish off)", res, err)
	}
	if n := env.scalar(t, "SELECT COUNT(*) FROM room_outbox WHERE event_id = 'go-typed-heat' AND status = 'pending' "+
		"AND envelope LIKE '%\"node_id\":\"typed-node\"%'"); n != 1 {
		t.Fatalf("go-typed-heat not pending from typed-node")
	}
}

// WithStdLogger writes the hook's lines through a standard *log.Logger.
func TestStdLoggerGetsTheHooksLines(t *testing.T) {
	env := environment(t)
	password := filepath.Join(t.TempDir(), "mysql-password")
	if err := os.WriteFile(password, []byte("unused-by-root\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(password, 0o640); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := log.New(lockedWriter{&mu, &buf}, "svc ", 0)
	openUp(t, env, roomoutbox.WithSetting("mysql.password_file", password), roomoutbox.WithStdLogger(logger))
	mu.Lock()
	defer mu.Unlock()
	if want := "svc roomoutbox: warn: configuration warning: mysql.password_file"; !strings.Contains(buf.String(), want) {
		t.Fatalf("log %q lacks %q", buf.String(), want)
	}
}

type lockedWriter struct {
	mu  *sync.Mutex
	buf *bytes.Buffer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func TestMetricsHandlerServesTheHooksFamilies(t *testing.T) {
	env := environment(t)
	hook := openUp(t, env)
	cmd, events := giftCommand("go-handler")
	if _, err := hook.Commit(cmd, events, nil); err != nil {
		t.Fatal(err)
	}
	handler := hook.MetricsHandler("svc")
	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") ||
		!strings.Contains(rec.Body.String(), `room_outbox_hook_commits_total{hook="svc",outcome="committed"} 1`+"\n") {
		t.Fatalf("GET /metrics: %d %q\n%s", rec.Code, rec.Header().Get("Content-Type"), rec.Body.String())
	}
	if err := hook.Close(); err != nil {
		t.Fatal(err)
	}
	rec = httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusServiceUnavailable {
		t.Fatalf("GET /metrics after Close: %d", rec.Code)
	}
}
