#!/usr/bin/env bash
# The outbox-relay container image, built and run with podman (root), as CI's `make image-check`:
#   1. scripts/image.sh builds deploy/outbox-relay.Containerfile unchanged (the relay, and the
#      im-stub image from the same build stage) on docker.io/library/debian:bookworm, made by
#      debootstrap and imported when missing (no registry is reachable here);
#   2. a private MariaDB (scripts/mariadb-local.sh, TCP on loopback, a password user) and the
#      im-stub image; `outbox-relay migrate` from the image;
#   3. the relay image runs as its non-root user on a read-only root filesystem, every capability
#      dropped, the config and the two secrets mounted read-only (CREDENTIALS_DIRECTORY), the
#      wake socket's directory on a volume: /readyz answers 200, /healthz 200, every row is
#      delivered;
#   4. SIGTERM (podman stop) while rows are in flight: exit code 0 within the grace period, the
#      rows in flight marked, no row left leased.
# Every container shares the host's network namespace: the relay reaches the MariaDB and the
# stand-in on 127.0.0.1 (plain http is accepted for loopback only). It prints a transcript that can
# be quoted and the step's time.
#
#   tests/install/check-image.sh
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cd "$src"
started=$SECONDS
scratch=$(mktemp -d /var/tmp/check-image.XXXXXX)
tag=check-$$
relay_image=localhost/room-outbox/outbox-relay:check
stub_image=localhost/room-outbox/im-stub:check
relay=outbox-relay-$tag
stub=im-stub-$tag
# shellcheck source=scripts/podman-env.sh
. scripts/podman-env.sh
cleanup() {
  local name
  for name in "$relay" "$stub" "migrate-$tag"; do
    podman rm --force --ignore --time 0 "$name" >/dev/null 2>&1 || true
  done
  podman volume rm -f "wake-$tag" >/dev/null 2>&1 || true
  scripts/mariadb-local.sh stop "$scratch/mariadb" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
trap 'echo "check-image: failed at line $LINENO" >&2' ERR
fail() {
  echo "check-image: $*" >&2
  podman logs "$relay" 2>&1 | tail -n 30 >&2 || true
  exit 1
}
step() { echo "check-image: $*"; }
# A transcript line: the command as typed (the scratch folder as $SCRATCH), then what it printed
# (indented).
run() {
  local line="$*"
  echo "  \$ ${line//$scratch/\$SCRATCH}"
  "$@" 2>&1 | sed 's/^/    /'
  return "${PIPESTATUS[0]}"
}
[ "$(id -u)" -eq 0 ] || fail "run as root (debootstrap, podman)"
for tool in podman runc debootstrap curl mariadb; do
  command -v "$tool" >/dev/null || fail "$tool missing: make deps"
done

# A loopback TCP port nobody listens on, from $1 up.
free_port() {
  local port=$1
  while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
  echo "$port"
}

# 1. The images.
build_started=$SECONDS
IMAGE_BUILD_LOG="$scratch/build.log" scripts/image.sh "$relay_image" "$stub_image" ||
  { tail -n 40 "$scratch/build.log" >&2; fail "the image build failed; log above"; }
build_seconds=$((SECONDS - build_started))
steps=$(grep -c 'STEP [0-9]*/[0-9]*:' "$scratch/build.log" || true)
cached=$(grep -c '^--> Using cache' "$scratch/build.log" || true)
step "built in ${build_seconds} s: $steps steps, $cached of them from podman's layer cache"
run podman image ls --filter reference='localhost/room-outbox/*:check' \
  --format '{{.Repository}}:{{.Tag}} {{.Size}}'
run podman image inspect --format \
  'user={{.Config.User}} entrypoint={{.Config.Entrypoint}} cmd={{.Config.Cmd}} env={{.Config.Env}}' \
  "$relay_image"

# 2. A private MariaDB on loopback TCP, a password user, the stand-in, the schema.
db_port=$(free_port 23306)
im_port=$(free_port 28080)
metrics_port=$(free_port 29464)
scripts/mariadb-local.sh start "$scratch/mariadb" --port="$db_port" --bind-address=127.0.0.1 >/dev/null
socket=$(scripts/mariadb-local.sh socket "$scratch/mariadb")
sql() { mariadb --socket="$socket" -uroot -N -B -e "$1"; }
password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
sql "CREATE DATABASE room_outbox; CREATE USER 'room_outbox'@'127.0.0.1' IDENTIFIED BY '$password';
     GRANT ALL ON room_outbox.* TO 'room_outbox'@'127.0.0.1'"
mkdir -p "$scratch/conf" "$scratch/secrets"
printf '%s\n' "$password" >"$scratch/secrets/mysql-password"
printf '%s\n' "check-image-im-secret-key" >"$scratch/secrets/tim-secret-key"
# Readable by the image's user (10001) through the read-only mount, as a secret volume would be.
chmod 0755 "$scratch/conf" "$scratch/secrets"
chmod 0644 "$scratch/secrets/"*
sed -e "s/^# node_id = .*/node_id = \"relay-check\"/" \
  -e "s/^host = \"mariadb\"/host = \"127.0.0.1\"/" -e "s/^port = 3306/port = $db_port/" \
  -e "s|^endpoint = .*|endpoint = \"http://127.0.0.1:$im_port\"|" \
  -e "s/^sdk_app_id = .*/sdk_app_id = 1400012345/" \
  -e "s/^listen = .*/listen = \"127.0.0.1:$metrics_port\"/" \
  -e "s|^# socket = .*|socket = \"/run/outbox-relay/wake.sock\"|" \
  -e "s/^publish_timeout = .*/publish_timeout = \"5s\"/" \
  conf/relay.docker.toml >"$scratch/conf/relay.toml"
chmod 0644 "$scratch/conf/relay.toml"
mounts=(-v "$scratch/conf:/etc/room-outbox:ro" -v "$scratch/secrets:/run/secrets:ro")
hardened=(--network host --read-only --cap-drop ALL --security-opt no-new-privileges)
step "the stand-in, the schema (MariaDB on 127.0.0.1:$db_port):"
run podman run -d --name "$stub" --network host --read-only --cap-drop ALL \
  -v "$scratch/secrets:/run/secrets:ro" "$stub_image" --port "$im_port" --sdk-app-id 1400012345 \
  --identifier administrator --group-id-prefix room_ --secret-key-file /run/secrets/tim-secret-key \
  --latency-ms 300 >/dev/null
echo "  \$ podman run --rm ${hardened[*]} (the mounts) $relay_image migrate --config /etc/room-outbox/relay.toml"
podman run --rm --name "migrate-$tag" "${hardened[@]}" "${mounts[@]}" "$relay_image" \
  migrate --config /etc/room-outbox/relay.toml >"$scratch/migrate.out" 2>&1 ||
  { cat "$scratch/migrate.out" >&2; fail "outbox-relay migrate failed"; }
grep -o '"from_version":[^,]*\|"to_version":[0-9]*' "$scratch/migrate.out" | sed 's/^/    /' 

# 200 rows in 20 rooms, as the hook writes them.
insert_rows() {
  local from=$1 to=$2
  sql "USE room_outbox; INSERT INTO room_outbox (event_id, event_type, room_id, command_id,
    request_id, envelope, status, retry_count, next_attempt_at_ms, created_at_ms, updated_at_ms)
    SELECT CONCAT('ev-', seq), 'RoomGiftSent', CONCAT('room-', seq % 20), CONCAT('cmd-', seq), '',
    CONCAT('{\"command_id\":\"cmd-', seq, '\",\"event_id\":\"ev-', seq,
      '\",\"event_type\":\"RoomGiftSent\",\"node_id\":\"check\",\"occurred_at_ms\":1,',
      '\"payload\":{\"gift\":\"rose\"},\"request_id\":\"\",\"room_id\":\"room-', seq % 20,
      '\",\"room_seq\":', seq, '}'),
    'pending', 0, 0, 0, 0 FROM seq_${from}_to_${to}"
}
count() { sql "SELECT COUNT(*) FROM room_outbox.room_outbox WHERE $1"; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ "$SECONDS" -lt "$deadline" ] || fail "no $what within the deadline"
    sleep 0.2
  done
}
insert_rows 1 200

# 3. The relay.
step "the relay: non-root, read-only root filesystem, no capabilities, secrets mounted:"
run_started=$SECONDS
run podman run -d --name "$relay" "${hardened[@]}" "${mounts[@]}" \
  -v "wake-$tag:/run/outbox-relay" "$relay_image" >/dev/null
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$metrics_port/readyz")" = 200 ]; }
wait_for 60 "GET /readyz 200" ready
# GET PATH on the metrics listener, as a transcript line: body and status.
probe() {
  echo "  \$ curl -s http://127.0.0.1:$metrics_port$1"
  curl -s -w ' (HTTP %{http_code})' "http://127.0.0.1:$metrics_port$1" | tr '\n' ' ' | sed 's/^/    /'
  echo
}
probe /readyz
probe /healthz
delivered() { [ "$(count "status = 'published'")" = 200 ]; }
wait_for 60 "delivery of the 200 rows" delivered
run podman exec "$relay" sh -c 'id; touch /usr/bin/x 2>&1; ls -l /run/outbox-relay'
echo "  \$ curl -s http://127.0.0.1:$metrics_port/metrics | grep ..."
curl -s "http://127.0.0.1:$metrics_port/metrics" >"$scratch/metrics.txt"
grep -E '^room_outbox_(publish_success_total|pending_total|db_up|leases_taken_over_total) ' \
  "$scratch/metrics.txt" | sed 's/^/    /'
step "200 rows published in $((SECONDS - run_started)) s after the start"

# 4. SIGTERM with rows in flight (the stand-in answers after 300 ms).
insert_rows 201 600
in_flight() { [ "$(count "status = 'pending' AND claim_token IS NOT NULL")" -gt 0 ]; }
wait_for 30 "row in flight" in_flight
published_before=$(count "status = 'published'")
step "SIGTERM with $(count "claim_token IS NOT NULL") rows leased:"
stop_started=$SECONDS
echo "  \$ podman stop -t 30 $relay"
podman stop -t 30 "$relay" >/dev/null
exit_code=$(podman inspect --format '{{.State.ExitCode}}' "$relay")
stop_seconds=$((SECONDS - stop_started))
echo "  \$ podman logs $relay | grep -E 'signal received|worker stopped|outbox-relay stopped'"
podman logs "$relay" 2>&1 | grep -E 'signal received|worker stopped|outbox-relay stopped' |
  sed 's/^/    /'
published_after=$(count "status = 'published'")
leased_after=$(count "claim_token IS NOT NULL")
echo "    exit code $exit_code after ${stop_seconds} s; published during the drain:" \
  "$((published_after - published_before)); rows left leased: $leased_after"
[ "$exit_code" = 0 ] || fail "the relay exited $exit_code on SIGTERM"
[ "$leased_after" = 0 ] || fail "$leased_after rows left leased after the drain"
[ "$published_after" -gt "$published_before" ] || fail "no row in flight was marked"
podman stop -t 5 "$stub" >/dev/null
step "passed in $((SECONDS - started)) s (build ${build_seconds} s)"
