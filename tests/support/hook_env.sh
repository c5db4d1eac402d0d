# Sourced by the tests of the hook's bindings (tests/c_abi, hook/go): the world a room service
# that links the installed hook lives in, built from real parts.
#
#   hook_env_start BUILD_DIR   sets, after making them:
#     HOOK_ENV_ROOT      the hook installed by the HookInstall fixture ($BUILD_DIR/hook-install)
#     HOOK_ENV_LIBDIR    its library directory; PKG_CONFIG_PATH and LD_LIBRARY_PATH point there
#     HOOK_ENV_SCRATCH   a scratch directory (removed by hook_env_stop), with tim-secret-key
#     HOOK_ENV_SOCKET    the private MariaDB of scripts/run-tests.sh
#     HOOK_ENV_DATABASE  a new database on it with schema/*.sql and sim/room_snapshot.sql applied
#                        (dropped by hook_env_stop)
#     HOOK_ENV_UP_CONFIG    relay.toml for a fake Tencent IM that answers OK (im-stub --mode up);
#                           it names no secret_key_file: the key is in HOOK_ENV_SCRATCH/tim-secret-key
#     HOOK_ENV_DOWN_CONFIG  relay.toml for a fake IM that answers errors (im-stub --mode down),
#                           with secret_key_file
#   hook_env_stop              stops the stubs, drops the database, removes the scratch directory
# Every failure exits non-zero with what failed: the tests never skip.

hook_env_fail() {
  echo "hook_env: $*" >&2
  exit 1
}

# Waits for the file im-stub writes once it listens (at most 20 s); sets HOOK_ENV_PORT.
hook_env_wait_port() {
  local file=$1 pid=$2 i
  for ((i = 0; i < 400; i++)); do
    if [ -s "$file" ]; then
      HOOK_ENV_PORT=$(cat "$file")
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || hook_env_fail "im-stub exited before listening"
    sleep 0.05
  done
  hook_env_fail "im-stub wrote no port file in 20 s"
}

# im-stub in MODE (up | down); sets HOOK_ENV_PORT.
hook_env_im_stub() {
  local mode=$1
  "$HOOK_ENV_BUILD/im-stub" --port 0 --port-file "$HOOK_ENV_SCRATCH/im-$mode.port" \
    --sdk-app-id 1400012345 --identifier administrator \
    --secret-key-file "$HOOK_ENV_SCRATCH/tim-secret-key" --mode "$mode" \
    >"$HOOK_ENV_SCRATCH/im-$mode.log" 2>&1 &
  HOOK_ENV_STUBS+=("$!")
  hook_env_wait_port "$HOOK_ENV_SCRATCH/im-$mode.port" "$!"
}

# relay.toml for the fake IM at PORT; EXTRA is appended to [tencent_im].
hook_env_config() {
  local file=$1 port=$2 extra=${3:-}
  cat >"$file" <<TOML
node_id = "hook-env"

[mysql]
socket = "$HOOK_ENV_SOCKET"
user = "root"
database = "$HOOK_ENV_DATABASE"

[tencent_im]
endpoint = "http://127.0.0.1:$port"
sdk_app_id = 1400012345
admin_identifier = "administrator"
group_id_prefix = "room_"
$extra

[hook]
sync_publish_timeout = "3s"
TOML
}

hook_env_sql() {
  mariadb --no-defaults --socket="$HOOK_ENV_SOCKET" -uroot "$@"
}

hook_env_start() {
  HOOK_ENV_BUILD=$(cd "${1:?usage: hook_env_start BUILD_DIR}" && pwd)
  HOOK_ENV_SOURCE=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  HOOK_ENV_SOCKET=${ROOM_OUTBOX_TEST_MYSQL_SOCKET:-}
  [ -n "$HOOK_ENV_SOCKET" ] ||
    hook_env_fail "ROOM_OUTBOX_TEST_MYSQL_SOCKET is not set: run through scripts/run-tests.sh"
  HOOK_ENV_ROOT="$HOOK_ENV_BUILD/hook-install/usr/local"
  HOOK_ENV_LIBDIR=$(dirname "$(find "$HOOK_ENV_ROOT" -name 'libroom_outbox_hook.so.1' | head -n1)")
  [ -e "$HOOK_ENV_LIBDIR/libroom_outbox_hook.so.1" ] ||
    hook_env_fail "no installed hook under $HOOK_ENV_ROOT (the HookInstall fixture installs it)"
  export PKG_CONFIG_PATH="$HOOK_ENV_LIBDIR/pkgconfig"
  export LD_LIBRARY_PATH="$HOOK_ENV_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  HOOK_ENV_SCRATCH=$(mktemp -d "$HOOK_ENV_BUILD/hook-env.XXXXXX")
  HOOK_ENV_STUBS=()
  HOOK_ENV_DATABASE="hook_env_$$_$RANDOM"
  trap hook_env_stop EXIT
  echo "hook-env-secret-$RANDOM$RANDOM" >"$HOOK_ENV_SCRATCH/tim-secret-key"
  hook_env_sql -e "CREATE DATABASE \`$HOOK_ENV_DATABASE\`" ||
    hook_env_fail "cannot create database $HOOK_ENV_DATABASE"
  local f
  # The outbox schema and the room snapshot table of the sample services.
  for f in "$HOOK_ENV_SOURCE"/schema/*.sql "$HOOK_ENV_SOURCE/sim/room_snapshot.sql"; do
    hook_env_sql "$HOOK_ENV_DATABASE" <"$f" || hook_env_fail "schema $f failed"
  done
  HOOK_ENV_UP_CONFIG="$HOOK_ENV_SCRATCH/up.toml"
  HOOK_ENV_DOWN_CONFIG="$HOOK_ENV_SCRATCH/down.toml"
  hook_env_im_stub up
  hook_env_config "$HOOK_ENV_UP_CONFIG" "$HOOK_ENV_PORT"
  hook_env_im_stub down
  hook_env_config "$HOOK_ENV_DOWN_CONFIG" "$HOOK_ENV_PORT" \
    "secret_key_file = \"$HOOK_ENV_SCRATCH/tim-secret-key\""
}

hook_env_stop() {
  local pid
  for pid in "${HOOK_ENV_STUBS[@]}"; do
    kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  done
  HOOK_ENV_STUBS=()
  [ -n "${HOOK_ENV_DATABASE:-}" ] &&
    hook_env_sql -e "DROP DATABASE IF EXISTS \`$HOOK_ENV_DATABASE\`" 2>/dev/null
  [ -n "${HOOK_ENV_SCRATCH:-}" ] && rm -rf "$HOOK_ENV_SCRATCH"
  return 0
}
