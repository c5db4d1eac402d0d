#!/usr/bin/env bash
# Starts a private MariaDB under the build tree, runs ctest (extra arguments are passed on) and
# stops the server again, also when tests fail.
set -euo pipefail
build=${1:?usage: run-tests.sh BUILD_DIR [ctest args]}
shift
here=$(cd "$(dirname "$0")" && pwd)
dbdir="$(cd "$build" && pwd)/test-mariadb"

"$here/mariadb-local.sh" stop "$dbdir" || true
rm -rf "$dbdir"
trap '"$here/mariadb-local.sh" stop "$dbdir"' EXIT
export ROOM_OUTBOX_TEST_MYSQL_SOCKET
ROOM_OUTBOX_TEST_MYSQL_SOCKET=$("$here/mariadb-local.sh" start "$dbdir")
echo "run-tests: MariaDB on $ROOM_OUTBOX_TEST_MYSQL_SOCKET"
ctest --test-dir "$build" --output-on-failure --timeout 300 -j 2 "$@"
