#!/usr/bin/env bash
# `go test` of the Go package (hook/go) and its example against the INSTALLED hook (cgo through
# pkg-config room_outbox_hook), the private MariaDB and two fake Tencent IM servers
# (tests/support/hook_env.sh). Offline: GOPROXY=off, -mod=readonly, and the build cache under
# the build tree.
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
go test -count=1 -v ./...
# A service module of its own that requires the module path with the documented replace
# directive builds (testdata is outside the package's module).
(cd testdata/consumer && go vet . && go build -o /dev/null . &&
  echo "run-go-test: testdata/consumer builds against the module through its replace directive")
