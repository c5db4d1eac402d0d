#!/usr/bin/env bash
# go vet and go test of the pure-Go package (hook/gosql), its tests against the database
# (hook/gosql/dbtest) and its example service (hook/gosql/example), all with CGO_ENABLED=0, against
# the private MariaDB of scripts/run-tests.sh, a real outbox-relay and im-stub from BUILD_DIR.
# Offline: GOPROXY=off, -mod=readonly, the MySQL driver from Debian's
# golang-github-go-sql-driver-mysql-dev through replace directives. A test that skips here fails
# the run: the tests skip only where no database is configured, and here one is.
#
#   run-gosql-test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?usage: run-gosql-test.sh BUILD_DIR}" && pwd)
source_dir=$(cd "$here/../.." && pwd)
: "${ROOM_OUTBOX_TEST_MYSQL_SOCKET:?is not set: run through scripts/run-tests.sh}"
driver=/usr/share/gocode/src/github.com/go-sql-driver/mysql
[ -f "$driver/go.mod" ] || {
  echo "run-gosql-test: $driver is missing: make deps installs golang-github-go-sql-driver-mysql-dev" >&2
  exit 1
}
for bin in outbox-relay im-stub; do
  [ -x "$build/$bin" ] || { echo "run-gosql-test: $build/$bin is not built" >&2; exit 1; }
done

export GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOTELEMETRY=off CGO_ENABLED=0
export GOCACHE="$build/go-cache" GOPATH="$build/go-path"
export ROOM_OUTBOX_GOSQL_TEST_SOCKET="$ROOM_OUTBOX_TEST_MYSQL_SOCKET"
export ROOM_OUTBOX_GOSQL_TEST_RELAY="$build/outbox-relay"
export ROOM_OUTBOX_GOSQL_TEST_IM_STUB="$build/im-stub"
export ROOM_OUTBOX_GOSQL_TEST_DATABASE="gosql_$$_$RANDOM"
sql() { mariadb --no-defaults --socket="$ROOM_OUTBOX_TEST_MYSQL_SOCKET" -uroot "$@"; }
scratch=$(mktemp -d "$build/gosql-test.XXXXXX")
cleanup() {
  sql -e "DROP DATABASE IF EXISTS \`$ROOM_OUTBOX_GOSQL_TEST_DATABASE\`" || true
  rm -rf "$scratch"
}
trap cleanup EXIT
sql -e "CREATE DATABASE \`$ROOM_OUTBOX_GOSQL_TEST_DATABASE\`"
for f in "$source_dir"/schema/*.sql "$source_dir/sim/room_snapshot.sql"; do
  sql "$ROOM_OUTBOX_GOSQL_TEST_DATABASE" <"$f" || { echo "run-gosql-test: $f failed" >&2; exit 1; }
done

# Every module: vet, then its tests; the output is kept to find skipped tests.
for module in "$here" "$here/dbtest" "$here/example"; do
  echo "run-gosql-test: $module"
  (cd "$module" && go vet ./... && go test -count=1 -v ./...) 2>&1 | tee -a "$scratch/go-test.log"
done
if grep -q -- '--- SKIP' "$scratch/go-test.log"; then
  echo "run-gosql-test: tests skipped although the database is configured:" >&2
  grep -- '--- SKIP' "$scratch/go-test.log" >&2
  exit 1
fi
# The example's service builds without cgo into one static binary.
(cd "$here/example" && go build -o "$scratch/room-service" ./cmd/room-service)
if readelf -d "$scratch/room-service" | grep -q NEEDED; then
  echo "run-gosql-test: room-service needs shared libraries although built with CGO_ENABLED=0:" >&2
  readelf -d "$scratch/room-service" | grep NEEDED >&2
  exit 1
fi
echo "run-gosql-test: hook/gosql/example/cmd/room-service builds with CGO_ENABLED=0, static (no NEEDED entry)"
