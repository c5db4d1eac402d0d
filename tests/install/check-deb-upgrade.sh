#!/usr/bin/env bash
# The package upgrade path, with real dpkg -i, on a private MariaDB at the older schema (root):
#   1. builds an older outbox-relay package: this tree as it was before its newest schema step was
#      added (git history), version <version>~older, in the tree path `make deb` uses, so its
#      compiler cache serves every unchanged file;
#   2. dpkg -i of the older package; its `outbox-relay migrate` brings a new database to its schema;
#      its relay runs and is ready (GET /readyz 200);
#   3. dpkg -i of the newer package (`make deb`'s); the relay restarts as the unit's try-restart
#      would (no systemd here: SIGTERM, then the new /usr/bin/outbox-relay). When the new relay
#      needs the newest step (kRequiredSchemaVersion, relay/src/migrate/migrate.h) it must stay
#      up, not ready, /readyz naming the versions and `outbox-relay migrate`; --once refuses (exit
#      2). When it does not (a step such as an index for the hook), it must be ready on the older
#      schema and `outbox-relay stats` must run (exit 0);
#   4. the new `outbox-relay migrate`; the same relay process is (or becomes by itself) ready;
#   5. SIGTERM (exit 0), dpkg --purge, the MariaDB stopped.
# It prints a transcript of what an operator would type and see.
#
#   tests/install/check-deb-upgrade.sh DEB_DIR [JOBS]
set -euo pipefail
debs=$(cd "${1:?usage: check-deb-upgrade.sh DEB_DIR [JOBS]}" && pwd)
jobs=${2:-$(nproc)}
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
relay_pid=
installed=
cleanup() {
  if [ -n "$relay_pid" ]; then kill -KILL "$relay_pid" 2>/dev/null || true; fi
  if [ -n "$installed" ]; then dpkg --purge outbox-relay >/dev/null 2>&1 || true; fi
  "$src/scripts/mariadb-local.sh" stop "$scratch/mariadb" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "check-deb-upgrade: $*" >&2; exit 1; }
step() { echo "check-deb-upgrade: $*"; }
# A transcript line: the command as the operator types it, then what it prints (indented).
say() { printf '    %s\n' "$@"; }
run() {
  echo "  # $*"
  "$@" 2>&1 | sed 's/^/    /'
  return "${PIPESTATUS[0]}"
}

[ "$(id -u)" -eq 0 ] || fail "run as root: it installs and purges packages on this machine"
cd "$src"
version=$(dpkg-parsechangelog -S Version)
older="${version}~older"
new_deb=("$debs/outbox-relay_${version}_"*.deb)
[ -e "${new_deb[0]}" ] || fail "no outbox-relay_${version}_*.deb in $debs: run make deb"
if dpkg-query -W -f='${db:Status-Status}' outbox-relay 2>/dev/null | grep -qv '^not-installed$'; then
  fail "outbox-relay is already on this machine: dpkg --purge outbox-relay first"
fi

# 1. The older package: this tree as it was before its newest schema step was added (from git,
#    so the older relay is the code that shipped with that schema), at the path `make deb` uses,
#    with a lower version.
started=$SECONDS
tree="$debs/room-outbox-$version"
rm -rf "$tree" "$debs/older"
mkdir -p "$tree" "$debs/older"
newest_step=$(cd schema && ls [0-9][0-9][0-9]_*.sql | tail -n 1)
git rev-parse --git-dir >/dev/null 2>&1 ||
  fail "not a git checkout: the older package is built from the history of schema/$newest_step"
added=$(git log -1 --format=%H --diff-filter=A -- "schema/$newest_step")
[ -n "$added" ] || fail "schema/$newest_step is not in this checkout's history (a shallow clone?)"
git archive "${added}^" | tar -xf - -C "$tree"
older_schema=$(cd "$tree/schema" && ls [0-9][0-9][0-9]_*.sql | tail -n 1 | cut -c1-3)
newer_schema=${newest_step:0:3}
required=$(sed -n 's/^inline constexpr int64_t kRequiredSchemaVersion = \([0-9]*\);$/\1/p' \
  relay/src/migrate/migrate.h)
[ -n "$required" ] || fail "no kRequiredSchemaVersion in relay/src/migrate/migrate.h"
# Whether the new relay waits for the newest step (it needs a version the older schema lacks).
if [ "$((10#$older_schema))" -lt "$required" ]; then waits_for_migrate=yes; else waits_for_migrate=; fi
{
  printf 'room-outbox (%s) unstable; urgency=medium\n\n' "$older"
  printf '  * The release before %s: schema %s.\n\n' "$version" "$older_schema"
  printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -S Maintainer)" "$(date -R)"
  cat debian/changelog
} >"$tree/debian/changelog"
(
  cd "$tree"
  export DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}"
  if command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="$debs/ccache"
  fi
  dpkg-buildpackage -us -uc -b
) >"$debs/older/build.log" 2>&1 || {
  tail -n 40 "$debs/older/build.log" >&2
  fail "dpkg-buildpackage of $older failed; the whole log is $debs/older/build.log"
}
mv "$debs"/*_"${older}"_* "$debs/older/"
old_deb=("$debs/older/outbox-relay_${older}_"*.deb)
[ -e "${old_deb[0]}" ] || fail "no outbox-relay_${older}_*.deb was built"
step "built ${old_deb[0]##*/} in $((SECONDS - started)) s"

# A private MariaDB and a relay config aimed at it (IM on a closed loopback port: no row is sent,
# readiness needs only the database).
"$src/scripts/mariadb-local.sh" start "$scratch/mariadb" >/dev/null
socket=$("$src/scripts/mariadb-local.sh" socket "$scratch/mariadb")
mariadb --socket="$socket" -uroot -e 'CREATE DATABASE room_outbox'
# The first loopback port from 19464 on that nobody answers on.
port=19464
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
config="$scratch/relay.toml"
cat >"$config" <<TOML
node_id = "upgrade-check"
[mysql]
socket = "$socket"
user = "root"
database = "room_outbox"
[outbox_worker]
poll_interval = "200ms"
[tencent_im]
endpoint = "http://127.0.0.1:9"
sdk_app_id = 1400012345
app_requests_per_second = 0
[metrics]
listen = "127.0.0.1:$port"
TOML
export ROOM_OUTBOX_TIM_SECRET_KEY=upgrade-check-key
readyz() { curl -s -o "$scratch/readyz" -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true; }
# Waits up to 60 s for /readyz to answer CODE (and, when given, a body containing TEXT: the
# listener answers 503 from its start, the schema's reason once the check has run).
wait_readyz() {
  local code=$1 text=${2:-}
  for _ in $(seq 600); do
    if [ "$(readyz)" = "$code" ] && { [ -z "$text" ] || grep -qF "$text" "$scratch/readyz"; }; then
      return 0
    fi
    [ -n "$relay_pid" ] && ! kill -0 "$relay_pid" 2>/dev/null && fail "the relay exited: $(tail -5 "$scratch/relay.log")"
    sleep 0.1
  done
  fail "/readyz never answered $code; last: $(cat "$scratch/readyz" 2>/dev/null); log: $(tail -5 "$scratch/relay.log")"
}
start_relay() {
  /usr/bin/outbox-relay --config "$config" >>"$scratch/relay.log" 2>&1 &
  relay_pid=$!
}
stop_relay() {
  kill -TERM "$relay_pid"
  local rc=0
  wait "$relay_pid" || rc=$?
  relay_pid=
  return "$rc"
}

echo
echo "== Upgrade transcript: outbox-relay $older (schema $older_schema) -> $version (schema $newer_schema) =="
echo "-- the older release, installed and migrated, its relay ready"
echo "  # dpkg -i ${old_deb[0]##*/}"
dpkg -i "${old_deb[0]}" >"$scratch/dpkg-older.log" 2>&1 ||
  { cat "$scratch/dpkg-older.log" >&2; fail "dpkg -i ${old_deb[0]##*/} failed"; }
installed=yes
say "outbox-relay $(dpkg-query -W -f='${Version}' outbox-relay) installed"
run outbox-relay migrate --config "$config" || fail "the older migrate failed"
start_relay
wait_readyz 200
echo "  # curl http://127.0.0.1:$port/readyz"
say "$(cat "$scratch/readyz")"

echo "-- the upgrade: dpkg -i of the newer package, then the unit's try-restart"
echo "  # dpkg -i ${new_deb[0]##*/}"
dpkg -i "${new_deb[0]}" >"$scratch/dpkg-newer.log" 2>&1 ||
  { cat "$scratch/dpkg-newer.log" >&2; fail "dpkg -i ${new_deb[0]##*/} failed"; }
say "outbox-relay $(dpkg-query -W -f='${Version}' outbox-relay) installed"
echo "  # systemctl try-restart outbox-relay   (the package's postinst; here: SIGTERM, start)"
stop_relay || fail "the older relay did not exit 0 on SIGTERM"
start_relay
if [ -n "$waits_for_migrate" ]; then
  wait_readyz 503 "outbox-relay migrate"
  echo "  # curl http://127.0.0.1:$port/readyz          (HTTP 503)"
  say "$(cat "$scratch/readyz")"
  grep -q 'outbox-relay migrate' "$scratch/readyz" || fail "/readyz does not name outbox-relay migrate"
  echo "  # journalctl -u outbox-relay   (the relay's log)"
  grep 'waiting for the database schema' "$scratch/relay.log" | sed 's/^/    /'
  kill -0 "$relay_pid" || fail "the relay exited on the older schema"
  echo "  # outbox-relay --once          (a person waits for it: it refuses at once)"
  set +e
  outbox-relay --once --config "$config" >"$scratch/once.log" 2>&1
  once=$?
  set -e
  grep -o 'the database.s schema is version [^"]*' "$scratch/once.log" | head -1 | sed 's/^/    /'
  say "exit status $once"
  [ "$once" -eq 2 ] || fail "--once exited $once on the older schema, expected 2"
else
  wait_readyz 200
  echo "  # curl http://127.0.0.1:$port/readyz          (HTTP 200: schema $older_schema is enough, it needs $required)"
  say "$(cat "$scratch/readyz")"
  # The operator commands check the schema as --once does (which cannot run beside the daemon:
  # one node_id, one metrics port).
  echo "  # outbox-relay stats           (the operator commands accept the older schema)"
  set +e
  outbox-relay stats --config "$config" >"$scratch/stats.log" 2>&1
  stats=$?
  set -e
  say "exit status $stats"
  [ "$stats" -eq 0 ] || fail "stats exited $stats on schema $older_schema, expected 0: $(tail -5 "$scratch/stats.log")"
fi

if [ -n "$waits_for_migrate" ]; then
  echo "-- the operator migrates; the waiting relay starts by itself"
else
  echo "-- the operator migrates; the running relay stays ready"
fi
run outbox-relay migrate --config "$config" || fail "the newer migrate failed"
wait_readyz 200
echo "  # curl http://127.0.0.1:$port/readyz"
say "$(cat "$scratch/readyz")"
if [ -n "$waits_for_migrate" ]; then
  grep 'database schema migrated; starting work' "$scratch/relay.log" | sed 's/^/    /'
fi
stop_relay || fail "the relay did not exit 0 on SIGTERM"
say "(SIGTERM: exit status 0)"
echo "== end of transcript =="
echo

dpkg --purge outbox-relay >/dev/null
installed=
if [ -n "$waits_for_migrate" ]; then
  step "passed: the upgraded relay stayed up not ready on schema $older_schema and became ready after migrate"
else
  step "passed: the upgraded relay was ready on schema $older_schema (it needs $required) and stayed ready through migrate to $newer_schema"
fi
