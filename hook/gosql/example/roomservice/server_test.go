package roomservice

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	outboxsql "github.com/room-outbox/room-outbox/hook/gosql"
)

// testService is the service on the test database of hook/gosql/run-gosql-test.sh, with a
// unix datagram socket standing in for the relay's wake socket.
type testService struct {
	db   *sql.DB
	http *httptest.Server
	wake *net.UnixConn
}

func newTestService(t *testing.T) *testService {
	t.Helper()
	socket, database := os.Getenv("ROOM_OUTBOX_GOSQL_TEST_SOCKET"), os.Getenv("ROOM_OUTBOX_GOSQL_TEST_DATABASE")
	if socket == "" || database == "" {
		t.Skip("no test database configured (ROOM_OUTBOX_GOSQL_TEST_SOCKET, _DATABASE): run " +
			"hook/gosql/run-gosql-test.sh under scripts/run-tests.sh (`scripts/run-tests.sh build -R GoSql`)")
	}
	db, err := sql.Open("mysql", fmt.Sprintf("root@unix(%s)/%s", socket, database))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := CreateSchema(context.Background(), db); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wake.sock")
	wake, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wake.Close() })
	writer, err := outboxsql.New(outboxsql.Options{NodeID: "room-service-test", GroupIDPrefix: "live_", WakeSocket: path})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(NewServer(db, writer))
	t.Cleanup(srv.Close)
	return &testService{db: db, http: srv, wake: wake}
}

func (s *testService) post(t *testing.T, path, body string) (int, GiftResponse) {
	t.Helper()
	res, err := http.Post(s.http.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out GiftResponse
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("POST %s: %d, body not JSON: %v", path, res.StatusCode, err)
	}
	return res.StatusCode, out
}

func (s *testService) count(t *testing.T, query string, args ...interface{}) int64 {
	t.Helper()
	var n int64
	if err := s.db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestHealthz(t *testing.T) {
	srv := httptest.NewServer(NewServer(nil, nil))
	defer srv.Close()
	res, err := http.Get(srv.URL + "/healthz")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %v, %v", res, err)
	}
	res.Body.Close()
}

// Two gifts move the room to room_seq 1 and 2, each commit writes its rows (the gift pending
// for the relay, the heat skipped) and wakes the relay; a repeated command_id changes nothing.
func TestGiftsCommitTheRoomsStateAndItsEventsTogether(t *testing.T) {
	s := newTestService(t)
	room := fmt.Sprintf("example-room-%d", time.Now().UnixNano())
	for seq := int64(1); seq <= 2; seq++ {
		code, res := s.post(t, "/rooms/"+room+"/gifts",
			fmt.Sprintf(`{"command_id":"%s-%d","user_id":"u1","gift":"rose","count":2}`, room, seq))
		if code != http.StatusCreated || res.Status != "committed" || res.RoomSeq != seq || len(res.Events) != 2 ||
			res.Events[0].State != outboxsql.Pending || res.Events[1].State != outboxsql.Skipped {
			t.Fatalf("gift %d: %d %+v", seq, code, res)
		}
		if err := s.wake.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if n, err := s.wake.Read(make([]byte, 8)); err != nil || n != 1 {
			t.Fatalf("gift %d: no wake-up datagram: %v", seq, err)
		}
	}
	if n := s.count(t, "SELECT gifts FROM room_gift_state WHERE room_id = ? AND room_seq = 2", room); n != 4 {
		t.Fatalf("room state: %d gifts at room_seq 2, want 4", n)
	}
	if n := s.count(t, "SELECT COUNT(*) FROM room_outbox WHERE room_id = ? AND event_type = 'RoomGiftSent' AND status = 'pending'", room); n != 2 {
		t.Fatalf("%d pending gift rows, want 2", n)
	}
	code, res := s.post(t, "/rooms/"+room+"/gifts", fmt.Sprintf(`{"command_id":"%s-1","user_id":"u1","gift":"rose"}`, room))
	if code != http.StatusOK || res.Status != "duplicate" {
		t.Fatalf("repeated command: %d %+v", code, res)
	}
	if n := s.count(t, "SELECT room_seq FROM room_gift_state WHERE room_id = ?", room); n != 2 {
		t.Fatalf("a duplicate moved the room to room_seq %d", n)
	}
}

func TestBadRequestsAreRefusedWithWhy(t *testing.T) {
	s := newTestService(t)
	long := strings.Repeat("r", 44) // live_ + 44 bytes: a GroupId over IM's 48
	for _, c := range []struct {
		path, body, want string
		code             int
	}{
		{"/rooms/r1/gifts", `{"user_id":`, "body: ", http.StatusBadRequest},
		{"/rooms/r1/gifts", `{"gift":"rose"}`, "user_id and gift are required", http.StatusBadRequest},
		{"/rooms/" + long + "/gifts", `{"user_id":"u1","gift":"rose"}`, "is 49 bytes, over IM's 48", http.StatusBadRequest},
	} {
		code, res := s.post(t, c.path, c.body)
		if code != c.code || !strings.Contains(res.Error, c.want) {
			t.Errorf("POST %s %s: %d %+v, want %d naming %q", c.path, c.body, code, res, c.code, c.want)
		}
	}
	if n := s.count(t, "SELECT COUNT(*) FROM room_gift_state WHERE room_id = ?", long); n != 0 {
		t.Fatalf("a refused gift left the room's row")
	}
	res, err := http.Get(s.http.URL + "/rooms/r1/gifts")
	if err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET gifts: %v, %v", res, err)
	}
	res.Body.Close()
}
