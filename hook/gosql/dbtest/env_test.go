package dbtest

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// testEnv is what hook/gosql/run-gosql-test.sh made: a database of this run on the private
// MariaDB with the schema applied, and the paths of outbox-relay and im-stub.
type testEnv struct {
	Socket, Database, Relay, ImStub string
}

// environment reads the runner's variables. Without them the test skips, saying how to run it;
// the runner itself fails when any test skipped.
func environment(t testing.TB) testEnv {
	t.Helper()
	env := testEnv{
		Socket:   os.Getenv("ROOM_OUTBOX_GOSQL_TEST_SOCKET"),
		Database: os.Getenv("ROOM_OUTBOX_GOSQL_TEST_DATABASE"),
		Relay:    os.Getenv("ROOM_OUTBOX_GOSQL_TEST_RELAY"),
		ImStub:   os.Getenv("ROOM_OUTBOX_GOSQL_TEST_IM_STUB"),
	}
	if env.Socket == "" || env.Database == "" || env.Relay == "" || env.ImStub == "" {
		t.Skip("no test database configured (ROOM_OUTBOX_GOSQL_TEST_SOCKET, _DATABASE, _RELAY, " +
			"_IM_STUB): run hook/gosql/run-gosql-test.sh BUILD_DIR under scripts/run-tests.sh, " +
			"or `scripts/run-tests.sh build -R GoSql`")
	}
	return env
}

// open is a *sql.DB on the test database; params are added to the DSN (e.g. a session
// time_zone).
func (e testEnv) open(t testing.TB, params string) *sql.DB {
	t.Helper()
	dsn := fmt.Sprintf("root@unix(%s)/%s", e.Socket, e.Database)
	if params != "" {
		dsn += "?" + params
	}
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := db.Ping(); err != nil {
		t.Fatalf("ping %s: %v", e.Database, err)
	}
	return db
}

func scalar(t testing.TB, db *sql.DB, query string, args ...interface{}) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n.Int64
}

// eventually polls cond every 50 ms until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// process is a child process stopped (SIGTERM, then waited for) when the test ends.
type process struct {
	cmd    *exec.Cmd
	stderr string
	done   chan struct{} // closed once the process exited
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

func start(t testing.TB, dir, name string, args ...string) *process {
	t.Helper()
	p := &process{stderr: filepath.Join(dir, name+".log"), done: make(chan struct{})}
	out, err := os.Create(p.stderr)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(args[0], args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		stopping := time.Now()
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		<-p.done
		t.Logf("%s stopped %s after SIGTERM", name, time.Since(stopping).Round(time.Millisecond))
		_ = out.Close()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, p.tail())
		}
	})
	return p
}

func (p *process) tail() string {
	b, _ := os.ReadFile(p.stderr)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// imStub is im-stub recording every request, answering OK.
type imStub struct {
	endpoint string
	keyFile  string
}

const (
	sdkAppID      = "1400012345"
	groupIDPrefix = "gosql_"
)

func startImStub(t testing.TB, env testEnv, dir string) imStub {
	t.Helper()
	key := filepath.Join(dir, "tim-secret-key")
	if err := os.WriteFile(key, []byte("gosql-test-key-"+fmt.Sprint(time.Now().UnixNano())+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	portFile := filepath.Join(dir, "im.port")
	p := start(t, dir, "im-stub", env.ImStub, "--port", "0", "--port-file", portFile,
		"--sdk-app-id", sdkAppID, "--identifier", "administrator", "--secret-key-file", key,
		"--group-id-prefix", groupIDPrefix, "--mode", "up", "--record")
	var port string
	eventually(t, 20*time.Second, "im-stub's port file", func() bool {
		b, err := os.ReadFile(portFile)
		port = strings.TrimSpace(string(b))
		if p.exited() {
			t.Fatalf("im-stub exited:\n%s", p.tail())
		}
		return err == nil && port != ""
	})
	return imStub{endpoint: "http://127.0.0.1:" + port, keyFile: key}
}

// imRequest is one request of GET /admin/requests.
type imRequest struct {
	GroupID   string   `json:"group_id"`
	Delivered bool     `json:"delivered"`
	EventIDs  []string `json:"event_ids"`
	Body      string   `json:"body"`
}

func (s imStub) requests(t testing.TB) []imRequest {
	t.Helper()
	// No keep-alive: an idle connection would hold im-stub's stop for its 30 s keep-alive.
	client := http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	res, err := client.Get(s.endpoint + "/admin/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []imRequest
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// startRelay runs outbox-relay on the test database against the stub, polling only every 30 s,
// with its wake socket at dir/wake.sock; it returns once the socket is bound.
func startRelay(t testing.TB, env testEnv, dir string, im imStub) string {
	t.Helper()
	return startRelayPaced(t, env, dir, im, "")
}

// startRelayPaced is startRelay with [outbox_worker] room_min_interval set ("": the default).
func startRelayPaced(t testing.TB, env testEnv, dir string, im imStub, roomMinInterval string) string {
	t.Helper()
	wake := filepath.Join(dir, "wake.sock")
	config := filepath.Join(dir, "relay.toml")
	text := fmt.Sprintf(`node_id = "gosql-test"
[mysql]
socket = %q
user = "root"
database = %q
[outbox_worker]
poll_interval = "30s"
%s[tencent_im]
endpoint = %q
sdk_app_id = %s
admin_identifier = "administrator"
group_id_prefix = %q
secret_key_file = %q
requests_per_second = 0
app_requests_per_second = 0
[wake]
socket = %q
`, env.Socket, env.Database, pace(roomMinInterval), im.endpoint, sdkAppID, groupIDPrefix, im.keyFile, wake)
	if dialect := os.Getenv("ROOM_OUTBOX_TEST_MYSQL_DIALECT"); dialect != "" {
		text = strings.Replace(text, "[mysql]\n", "[mysql]\ndialect = \""+dialect+"\"\n", 1)
	}
	if err := os.WriteFile(config, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, dir, "outbox-relay", env.Relay, "--config", config)
	eventually(t, 30*time.Second, "the relay's wake socket", func() bool {
		_, err := os.Stat(wake)
		if p.exited() {
			t.Fatalf("outbox-relay exited:\n%s", p.tail())
		}
		return err == nil
	})
	return wake
}

// envelopes are the envelope columns of the rows whose event_id is LIKE like, by event_id.
func envelopes(t testing.TB, db *sql.DB, like string) map[string]string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(),
		"SELECT event_id, envelope FROM room_outbox WHERE event_id LIKE ?", like)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, env string
		if err := rows.Scan(&id, &env); err != nil {
			t.Fatal(err)
		}
		out[id] = env
	}
	return out
}

func pace(roomMinInterval string) string {
	if roomMinInterval == "" {
		return ""
	}
	return fmt.Sprintf("room_min_interval = %q\n", roomMinInterval)
}
