package roomoutbox_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// testEnv is the world tests/support/hook_env.sh made: the private MariaDB with a database of
// this run, a fake Tencent IM that answers OK and one that answers errors.
type testEnv struct {
	UpConfig, DownConfig, SecretKey, Socket, Database string
}

// environment reads the harness's variables. Without them the test skips, saying how to run it
// (a service's `go test ./...` over its dependencies has no database); hook/go/run-go-test.sh,
// which sets them, fails when any test skipped.
func environment(t *testing.T) testEnv {
	t.Helper()
	get := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			t.Skipf("no test database configured (%s is not set): run hook/go/run-go-test.sh "+
				"BUILD_DIR under scripts/run-tests.sh, or `scripts/run-tests.sh build -R GoPackage`", name)
		}
		return v
	}
	key, err := os.ReadFile(get("ROOM_OUTBOX_GO_TEST_SECRET_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	return testEnv{
		UpConfig:   get("ROOM_OUTBOX_GO_TEST_UP_CONFIG"),
		DownConfig: get("ROOM_OUTBOX_GO_TEST_DOWN_CONFIG"),
		SecretKey:  strings.TrimSpace(string(key)),
		Socket:     get("ROOM_OUTBOX_TEST_MYSQL_SOCKET"),
		Database:   get("ROOM_OUTBOX_GO_TEST_DATABASE"),
	}
}

// scalar runs one query (test-controlled text, no outside data) with the mariadb client and
// returns its single value as an integer.
func (e testEnv) scalar(t *testing.T, query string) int64 {
	t.Helper()
	out, err := exec.Command("mariadb", "--no-defaults", "--socket="+e.Socket, "-uroot", "-N", "-B",
		e.Database, "-e", query).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %s", query, err, out)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		t.Fatalf("%s: not a number: %q", query, out)
	}
	return n
}
