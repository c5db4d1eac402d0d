#!/usr/bin/env bash
# A private MariaDB server for tests, the demo and benchmarks: its own datadir and unix socket
# under DIR, no TCP port unless asked for, nothing shared with a system server.
#
#   scripts/mariadb-local.sh start DIR [ARG...]  # install the datadir if new, start, wait until
#                                                # ready; ARGs go to mariadbd (a --port=... one
#                                                # turns networking on, e.g. for a TLS test)
#   scripts/mariadb-local.sh stop DIR    # shut down and wait for the process to end
#   scripts/mariadb-local.sh socket DIR  # print the socket path
#
# The server runs as root (mariadbd --user=root) and accepts root over the socket.
set -euo pipefail

cmd=${1:?usage: mariadb-local.sh start|stop|socket DIR}
dir=${2:?usage: mariadb-local.sh start|stop|socket DIR}
shift 2
extra=("$@")
networking=(--skip-networking)
for arg in "${extra[@]}"; do
  case "$arg" in --port=*) networking=() ;; esac
done
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
sock="$dir/mysqld.sock"
pidfile="$dir/mysqld.pid"

find_bin() {
  for b in "$@"; do
    if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
    if [ -x "/usr/sbin/$b" ]; then echo "/usr/sbin/$b"; return 0; fi
  done
  echo "mariadb-local.sh: none of $* found; run 'make deps'" >&2
  return 1
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

case "$cmd" in
  socket)
    echo "$sock"
    ;;
  start)
    if running; then echo "$sock"; exit 0; fi
    mariadbd=$(find_bin mariadbd mysqld)
    install_db=$(find_bin mariadb-install-db mysql_install_db)
    admin=$(find_bin mariadb-admin mysqladmin)
    # A temporary directory of this server's own: two servers installing or running at once
    # (tests run in parallel) must not share /tmp's temporary tables.
    mkdir -p "$dir/tmp"
    if [ ! -d "$dir/data/mysql" ]; then
      "$install_db" --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir/tmp" --skip-test-db \
        --auth-root-authentication-method=socket >"$dir/install.log" 2>&1 || {
        echo "mariadb-local.sh: mariadb-install-db failed; see $dir/install.log" >&2
        tail -20 "$dir/install.log" >&2
        exit 1
      }
    fi
    "$mariadbd" --no-defaults --user=root --datadir="$dir/data" --tmpdir="$dir/tmp" --socket="$sock" \
      --pid-file="$pidfile" "${networking[@]}" --log-error="$dir/error.log" \
      --innodb-buffer-pool-size=256M --innodb-log-file-size=128M \
      --innodb-flush-log-at-trx-commit=2 --skip-log-bin --max-connections=500 \
      --character-set-server=utf8mb4 --collation-server=utf8mb4_bin "${extra[@]}" >/dev/null 2>&1 &
    for _ in $(seq 1 300); do
      if "$admin" --no-defaults --socket="$sock" -uroot ping >/dev/null 2>&1; then
        echo "$sock"
        exit 0
      fi
      sleep 0.1
    done
    echo "mariadb-local.sh: server did not come up in 30s; see $dir/error.log" >&2
    tail -20 "$dir/error.log" >&2 || true
    exit 1
    ;;
  stop)
    if ! running; then exit 0; fi
    pid=$(cat "$pidfile")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 300); do
      kill -0 "$pid" 2>/dev/null || exit 0
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    ;;
  *)
    echo "usage: mariadb-local.sh start|stop|socket DIR" >&2
    exit 2
    ;;
esac
