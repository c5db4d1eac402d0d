#!/usr/bin/env bash
# `go test` of the Go package (hook/go), its fake (roomoutboxtest) and its example against the
# INSTALLED hook (cgo through pkg-config room_outbox_hook), the private MariaDB and two fake
# Tencent IM servers (tests/support/hook_env.sh); then a service built with the roomoutbox_static
# tag, run against the same database, whose ldd must show none of our libraries or the C
# libraries that have static archives. Offline: GOPROXY=off, -mod=readonly, and the build cache
# under the build tree. The package's tests skip where no database is configured; here one is,
# so a skipped test fails the run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../../tests/support/hook_env.sh
source "$here/../../tests/support/hook_env.sh"
hook_env_start "${1:?usage: run-go-test.sh BUILD_DIR}"

export GOPROXY=off GOFLAGS=-mod=readonly GOTOOLCHAIN=local GOTELEMETRY=off
export GOCACHE="$HOOK_ENV_BUILD/go-cache" GOPATH="$HOOK_ENV_BUILD/go-path"
export ROOM_OUTBOX_GO_TEST_UP_CONFIG="$HOOK_ENV_UP_CONFIG"
export ROOM_OUTBOX_GO_TEST_DOWN_CONFIG="$HOOK_ENV_DOWN_CONFIG"
export ROOM_OUTBOX_GO_TEST_SECRET_FILE="$HOOK_ENV_SCRATCH/tim-secret-key"
export ROOM_OUTBOX_GO_TEST_DATABASE="$HOOK_ENV_DATABASE"
cd "$here"
go vet ./...
go test -count=1 -v ./... 2>&1 | tee "$HOOK_ENV_SCRATCH/go-test.log"
if grep -q -- '--- SKIP' "$HOOK_ENV_SCRATCH/go-test.log"; then
  echo "run-go-test: tests skipped although the database is configured:" >&2
  grep -- '--- SKIP' "$HOOK_ENV_SCRATCH/go-test.log" >&2
  exit 1
fi
# A service module of its own that requires the module path with the documented replace
# directive builds (testdata is outside the package's module), linked shared and static.
cd testdata/consumer
go vet . && go build -o /dev/null .
echo "run-go-test: testdata/consumer builds against the module through its replace directive"
static="$HOOK_ENV_SCRATCH/room-service-static"
go vet -tags roomoutbox_static . && go build -tags roomoutbox_static -o "$static" .
echo "run-go-test: ldd of the consumer built with -tags roomoutbox_static:"
ldd "$static" | tee "$HOOK_ENV_SCRATCH/ldd.txt"
# Ours, and every C library Debian 12 has a static archive of (link_static.go says what stays).
if grep -E 'libroom_outbox_hook|libmariadb|libcurl|libssl|libcrypto|libz\.|libnghttp2|librtmp|libssh2|libpsl|libldap|liblber|libzstd|libbrotli|libgnutls|libhogweed|libnettle|libgmp|libtasn1|libidn2|libunistring|not found' \
  "$HOOK_ENV_SCRATCH/ldd.txt"; then
  echo "run-go-test: the static build needs the shared libraries above" >&2
  exit 1
fi
# It runs: the library's process-wide init, its config and a commit against the test database
# (the room its callback moves from room_seq 11; IM down: committed, the event left pending),
# with LD_LIBRARY_PATH emptied so no shared libroom_outbox_hook could be found.
hook_env_sql "$HOOK_ENV_DATABASE" -e \
  "INSERT INTO room_snapshot (room_id, room_seq, state, updated_at_ms) VALUES ('room-7', 11, '', 0)"
out=$(LD_LIBRARY_PATH= ROOM_OUTBOX_CONFIG="$HOOK_ENV_DOWN_CONFIG" "$static")
echo "run-go-test: the static consumer ran: $out"
[ "$out" = "committed <nil>" ] || { echo "run-go-test: want \"committed <nil>\"" >&2; exit 1; }
