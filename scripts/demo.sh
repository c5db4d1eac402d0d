#!/usr/bin/env bash
# The whole loop on one machine: a private MariaDB, a local stand-in for Tencent IM that is down
# at first, room-sim committing room commands through the hook (they succeed; their events stay
# pending), then IM comes up and outbox-relay drains the outbox until nothing is pending, and
# finally the relay is stopped with SIGTERM. Everything started here is stopped on exit.
set -euo pipefail

build=$(cd "${1:-build}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
work="$build/demo"
rooms=${DEMO_ROOMS:-8}
commands=${DEMO_COMMANDS:-300}

stub_pid=""
relay_pid=""
cleanup() {
  [ -n "$relay_pid" ] && kill -TERM "$relay_pid" 2>/dev/null || true
  [ -n "$stub_pid" ] && kill -TERM "$stub_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  "$here/mariadb-local.sh" stop "$work/mariadb" || true
}
trap cleanup EXIT

say() { printf '\n== %s\n' "$*"; }

rm -rf "$work"
mkdir -p "$work"

say "starting a private MariaDB under $work/mariadb"
sock=$("$here/mariadb-local.sh" start "$work/mariadb")
sql() { mariadb --no-defaults --socket="$sock" -uroot room_outbox "$@"; }
mariadb --no-defaults --socket="$sock" -uroot -e \
  "CREATE DATABASE room_outbox CHARACTER SET utf8mb4 COLLATE utf8mb4_bin"
counts() {
  sql -N -e "SELECT CONCAT('outbox: ', SUM(status='pending'), ' pending, ',
                SUM(status='published'), ' published, ', COALESCE(SUM(retry_count),0),
                ' failed attempts') FROM room_outbox"
}

head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/tim-secret-key"
chmod 600 "$work/tim-secret-key"

say "starting the Tencent IM stand-in on 127.0.0.1, DOWN (answers ErrorCode 10002)"
"$build/im-stub" --port 0 --port-file "$work/im.port" --sdk-app-id 1400012345 \
  --identifier administrator --secret-key-file "$work/tim-secret-key" --mode down \
  >"$work/im-stub.log" 2>&1 &
stub_pid=$!
for _ in $(seq 1 100); do [ -s "$work/im.port" ] && break; sleep 0.1; done
port=$(cat "$work/im.port")
im="http://127.0.0.1:$port"
echo "IM stand-in at $im"

cat >"$work/relay.toml" <<TOML
node_id = "demo-node"

[mysql]
socket = "$sock"
user = "root"
database = "room_outbox"
connect_timeout = "3s"

[outbox_worker]
enabled = true
poll_interval = "1s"
batch_size = 100
publish_timeout = "3s"
retry_strategy = "fixed_interval"

[tencent_im]
endpoint = "$im"
sdk_app_id = 1400012345
admin_identifier = "administrator"
secret_key_file = "$work/tim-secret-key"
group_id_prefix = "demo-"

[hook]
sync_publish_timeout = "300ms"

[log]
level = "info"
format = "text"
TOML

say "creating the schema: outbox-relay migrate (room-sim's own table: sim/room_snapshot.sql)"
"$build/outbox-relay" migrate --config "$work/relay.toml"
sql <"$root/sim/room_snapshot.sql"

say "room-sim: $commands commands over $rooms rooms while IM is down"
"$build/room-sim" --config "$work/relay.toml" --rooms "$rooms" --commands "$commands" --seed 7 \
  2>"$work/room-sim.log"
counts

say "outbox-relay starts while IM is still down: attempts fail, rows stay pending (log: $work/relay.log)"
"$build/outbox-relay" --config "$work/relay.toml" >"$work/relay.log" 2>&1 &
relay_pid=$!
for i in 1 2 3; do
  sleep 1
  echo "t+${i}s $(counts)"
done

echo "failed attempts so far (the head row of each room; later rows wait behind it):"
sql -t -e "SELECT event_id, room_id, status, retry_count, last_error
           FROM room_outbox WHERE retry_count > 0 ORDER BY id LIMIT 3"

say "bringing IM up; the relay drains on its next rounds"
curl -fsS -d "" "$im/admin/mode?value=up" >/dev/null
for i in $(seq 4 90); do
  sleep 1
  line=$(counts)
  echo "t+${i}s $line"
  case "$line" in *" 0 pending"*) break ;; esac
done

say "room-sim again with IM up: a new process's hook shares the app's IM budget with the relay"
echo "A new room-service process joins the app's IM budget (app_requests_per_second, 200/s) with"
echo "almost no share: the relay holds it until its next beat gives way, about a second later."
echo "So the hook sends about one event itself (sync_published); its next sync publishes find no"
echo "request budget within sync_publish_timeout (300ms here), which its sync breaker counts as"
echo "IM failing: after 3 it opens for 30 s, and the commits leave their events pending"
echo "(left_pending, room-sim.log says why) for the relay, which delivers them in its next rounds."
summary=$("$build/room-sim" --config "$work/relay.toml" --rooms "$rooms" --commands 50 --seed 8 \
  2>>"$work/room-sim.log")
echo "$summary"
for i in $(seq 1 30); do
  line=$(counts)
  case "$line" in *" 0 pending"*) break ;; esac
  sleep 1
done
echo "after the relay's rounds: $line"

say "stopping outbox-relay with SIGTERM"
kill -TERM "$relay_pid"
rc=0
wait "$relay_pid" || rc=$?
relay_pid=""
echo "outbox-relay exited with $rc"
grep -E 'stopping|stopped|shutdown' "$work/relay.log" | tail -3 || true

say "result"
counts
echo "IM stand-in: $(curl -fsS "$im/admin/stats")"
echo "rows that needed retries (published, so last_error is cleared):"
sql -t -e "SELECT event_id, event_type, room_id, status, retry_count, last_error
           FROM room_outbox WHERE retry_count > 0 ORDER BY id LIMIT 5"
pending=$(sql -N -e "SELECT COUNT(*) FROM room_outbox WHERE status='pending'")
if [ "$pending" != "0" ] || [ "$rc" != "0" ]; then
  echo "demo: FAILED ($pending rows still pending, relay exit $rc)" >&2
  exit 1
fi
echo "demo: every event delivered; the relay stopped cleanly"
