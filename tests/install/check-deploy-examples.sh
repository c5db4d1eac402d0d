#!/usr/bin/env bash
# The deployment examples against the product: compose.yaml (with deploy/compose/) and
# deploy/kubernetes/room-service.yaml must say what outbox-relay and its image actually are.
#   compose:    `docker-compose config` accepts the file; the relay's config passes
#               `outbox-relay --check-config`; the published port and the healthcheck are the
#               metrics listener's; the stand-in listens where the relay's endpoint points, with
#               its app id; the wake socket is where room-service sends and on a volume both
#               mount; the secrets are the files the config names.
#   Kubernetes: the ConfigMap's relay.toml passes --check-config; node_id comes from the downward
#               API (the pod's name); the probes are on the metrics listener's port and on the
#               paths the relay serves (/healthz startup and liveness; no readiness probe on the
#               sidecar, whose /readyz must not take room-service out of its Service); the wake socket is
#               on the emptyDir both containers mount; the secrets are mounted file by file
#               (subPath: the relay opens secret files without following links) under the names
#               the config gives; the config is where --config points; the pod runs as the
#               image's user; the grace period covers publish_timeout and the marks.
# The YAML is read as text, line by line (no YAML library): the files are written in the plain
# block style this script expects, and it fails naming what it did not find.
#
#   tests/install/check-deploy-examples.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: check-deploy-examples.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
relay="$build/outbox-relay"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
fail() { echo "check-deploy-examples: FAIL: $*" >&2; failures=$((failures + 1)); }
ok() { echo "check-deploy-examples: ok: $*"; }
expect() {  # expect WHAT ACTUAL WANTED
  if [ "$2" = "$3" ]; then ok "$1 ($2)"; else fail "$1: \"$2\", want \"$3\""; fi
}
[ -x "$relay" ] || { echo "check-deploy-examples: no $relay: build it first" >&2; exit 1; }
command -v docker-compose >/dev/null || { echo "check-deploy-examples: docker-compose missing: make deps" >&2; exit 1; }

# The effective value of KEY in section SECTION ("" for the top level) of --check-config's output.
effective() {
  awk -v section="$2" -v key="$3" '
    /^\[/ { current = substr($0, 2, length($0) - 2); next }
    current == section && $1 == key && $2 == "=" { sub(/^[^=]*= */, ""); gsub(/"/, ""); print; exit }
  ' "$1"
}
# The product's own facts: the paths the metrics listener serves, the image's user.
serves() { grep -q "server.Get(\"$1\"" "$src/relay/src/telemetry/metrics_server.cc"; }
for path in /healthz /readyz /metrics; do serves "$path" || fail "the relay no longer serves $path"; done
image_user=$(sed -n 's/^USER \([0-9]*\):.*/\1/p' "$src/deploy/outbox-relay.Containerfile" | tail -n 1)
[ -n "$image_user" ] || fail "no numeric USER in deploy/outbox-relay.Containerfile"

# --- compose -------------------------------------------------------------------------------
compose="$src/compose.yaml"
if docker-compose -f "$compose" config >"$scratch/compose.out" 2>"$scratch/compose.err"; then
  ok "docker-compose config accepts compose.yaml"
else
  fail "docker-compose config: $(cat "$scratch/compose.err")"
fi
services=$(docker-compose -f "$compose" config --services 2>/dev/null | sort | tr '\n' ' ')
expect "compose services" "$services" "im-stub migrate mysql outbox-relay room-service "
creds="$src/deploy/compose/dev-secrets"
if CREDENTIALS_DIRECTORY="$creds" "$relay" --check-config --config "$src/deploy/compose/relay.toml" \
  >"$scratch/compose-relay.toml" 2>"$scratch/check.err"; then
  ok "deploy/compose/relay.toml passes outbox-relay --check-config"
else
  fail "deploy/compose/relay.toml: $(tail -n 1 "$scratch/check.err")"
fi
c="$scratch/compose-relay.toml"
metrics_port=$(effective "$c" metrics listen | sed 's/.*://')
grep -q "\"127.0.0.1:$metrics_port:$metrics_port\"" "$compose" ||
  fail "compose does not publish the metrics listener's port $metrics_port"
grep -q "http://127.0.0.1:$metrics_port/readyz" "$compose" ||
  fail "the relay's healthcheck is not GET /readyz on port $metrics_port"
endpoint_port=$(effective "$c" tencent_im endpoint | sed 's/.*://')
grep -q "\"--port\", \"$endpoint_port\"" "$compose" ||
  fail "im-stub does not listen on the relay's endpoint port $endpoint_port"
grep -q "\"--sdk-app-id\", \"$(effective "$c" tencent_im sdk_app_id)\"" "$compose" ||
  fail "im-stub's --sdk-app-id is not the relay's sdk_app_id"
grep -q 'network_mode: "service:outbox-relay"' "$compose" ||
  fail "im-stub is not in the relay's network namespace (plain http reaches loopback only)"
wake=$(effective "$c" wake socket)
grep -q "ROOM_OUTBOX_WAKE_SOCKET: $wake\$" "$compose" ||
  fail "room-service's ROOM_OUTBOX_WAKE_SOCKET is not the relay's [wake] socket $wake"
[ "$(grep -c "      - wake:$(dirname "$wake")\$" "$compose")" = 2 ] ||
  fail "the volume wake is not mounted at $(dirname "$wake") in both the relay and room-service"
for secret in "$(effective "$c" mysql password_file)" "$(effective "$c" tencent_im secret_key_file)"; do
  grep -q "^  $secret:\$" "$compose" && [ -f "$creds/$secret" ] ||
    fail "compose has no secret $secret (the file the relay's config names)"
done
ok "compose: metrics port $metrics_port, stand-in port $endpoint_port, wake socket $wake"

# --- Kubernetes ------------------------------------------------------------------------------
k8s="$src/deploy/kubernetes/room-service.yaml"
# The ConfigMap's relay.toml: the block under "relay.toml: |", its 4-space indent removed. The
# placeholder app id is swapped for a valid one (the daemon refuses the placeholder).
awk '/^  relay.toml: \|$/ { inside = 1; next }
     inside && /^    / { print substr($0, 5); next }
     inside && /^ *$/ { print ""; next }
     inside { exit }' "$k8s" | sed 's/^sdk_app_id = 1400000000$/sdk_app_id = 1400012345/' \
  >"$scratch/k8s-relay.toml"
[ -s "$scratch/k8s-relay.toml" ] || fail "no relay.toml in the ConfigMap"
mkdir -p "$scratch/secrets"
printf 'x\n' >"$scratch/secrets/mysql-password"
printf 'x\n' >"$scratch/secrets/tim-secret-key"
chmod 0400 "$scratch/secrets/"*
if CREDENTIALS_DIRECTORY="$scratch/secrets" ROOM_OUTBOX_NODE_ID=room-service-7d9f-x2k4p \
  "$relay" --check-config --config "$scratch/k8s-relay.toml" >"$scratch/k8s-effective.toml" \
  2>"$scratch/check.err"; then
  ok "the ConfigMap's relay.toml passes outbox-relay --check-config"
else
  fail "the ConfigMap's relay.toml: $(tail -n 1 "$scratch/check.err")"
fi
k="$scratch/k8s-effective.toml"
expect "node_id from ROOM_OUTBOX_NODE_ID" "$(effective "$k" "" node_id)" "room-service-7d9f-x2k4p"
grep -A3 -- '- name: ROOM_OUTBOX_NODE_ID$' "$k8s" | grep -q 'fieldPath: metadata.name$' ||
  fail "ROOM_OUTBOX_NODE_ID is not the pod's name (downward API metadata.name)"
metrics_port=$(effective "$k" metrics listen | sed 's/.*://')
grep -A1 -- '- name: relay-metrics$' "$k8s" | grep -q "containerPort: $metrics_port\$" ||
  fail "the relay's port relay-metrics is not the metrics listener's $metrics_port"
# Each probe of the relay: its path and its port. A container's entry is the "- name:" at the
# pod spec's list indent (8 spaces); deeper ones are its env, ports and mounts.
probe() {  # probe KIND
  awk -v kind="$1" '
    /^        - name: / { container = $3 }
    container == "outbox-relay" && $1 == kind ":" { inside = 1; next }
    inside && $1 == "path:" { path = $2 }
    inside && $1 == "port:" { print path " " $2; exit }' "$k8s"
}
expect "the relay's livenessProbe" "$(probe livenessProbe)" "/healthz relay-metrics"
# A sidecar's readiness is the pod's: the relay's /readyz (503 while IM fails app-wide) must not
# take room-service out of its Service, so the relay has no readinessProbe.
expect "the relay's readinessProbe" "$(probe readinessProbe)" ""
expect "the relay's startupProbe" "$(probe startupProbe)" "/healthz relay-metrics"
wake=$(effective "$k" wake socket)
grep -A1 -- '- name: ROOM_OUTBOX_WAKE_SOCKET$' "$k8s" | grep -q "value: $wake\$" ||
  fail "room-service's ROOM_OUTBOX_WAKE_SOCKET is not the relay's [wake] socket $wake"
[ "$(grep -A1 -- '- name: wake$' "$k8s" | grep -c "mountPath: $(dirname "$wake")\$")" = 2 ] ||
  fail "the volume wake is not mounted at $(dirname "$wake") in both containers"
grep -A1 -- '- name: wake$' "$k8s" | grep -q 'emptyDir:' || fail "the volume wake is no emptyDir"
for secret in "$(effective "$k" mysql password_file)" "$(effective "$k" tencent_im secret_key_file)"; do
  grep -A1 -- "mountPath: /run/secrets/$secret\$" "$k8s" | grep -q "subPath: $secret\$" ||
    fail "the secret file $secret is not mounted at /run/secrets/$secret by subPath"
done
grep -q "ENV CREDENTIALS_DIRECTORY=/run/secrets" "$src/deploy/outbox-relay.Containerfile" ||
  fail "the image does not point CREDENTIALS_DIRECTORY at /run/secrets"
grep -q 'args: \["--config", "/etc/room-outbox/relay.toml"\]' "$k8s" &&
  grep -B1 -A1 'mountPath: /etc/room-outbox$' "$k8s" | grep -q 'name: relay-config' ||
  fail "the config is not mounted where --config points (/etc/room-outbox/relay.toml)"
expect "runAsUser (the image's user)" "$(sed -n 's/^ *runAsUser: //p' "$k8s" | sort -u)" "$image_user"
# The grace period: publish_timeout for the rows in flight, then the marks and room-service's own
# stop; at least 15 s beyond publish_timeout.
publish_s=$(effective "$k" outbox_worker publish_timeout | sed -n 's/^\([0-9]*\)s$/\1/p')
grace=$(sed -n 's/^ *terminationGracePeriodSeconds: //p' "$k8s")
if [ -n "$publish_s" ] && [ -n "$grace" ] && [ "$grace" -ge $((publish_s + 15)) ]; then
  ok "terminationGracePeriodSeconds $grace covers publish_timeout ${publish_s}s and the marks"
else
  fail "terminationGracePeriodSeconds \"$grace\" is under publish_timeout (${publish_s}s) + 15 s"
fi

if [ "$failures" -gt 0 ]; then
  echo "check-deploy-examples: $failures check(s) failed" >&2
  exit 1
fi
echo "check-deploy-examples: compose.yaml and deploy/kubernetes/room-service.yaml match the product"
