#!/usr/bin/env bash
# The C ABI test: builds tests/c_abi/c_abi_test.c as a C room service would, with
# gcc -std=c99 -Wall -Wextra -pedantic -Werror against the INSTALLED hook (headers and shared
# library through pkg-config), and runs it against the private MariaDB and two fake Tencent IM
# servers (tests/support/hook_env.sh). ROOM_OUTBOX_CONSUMER_CXXFLAGS: a sanitizer build's flags,
# which a program linking the sanitized library needs as well.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../support/hook_env.sh
source "$here/../support/hook_env.sh"
hook_env_start "${1:?usage: run-c-abi-test.sh BUILD_DIR}"

flags=$(pkg-config --cflags --libs room_outbox_hook libmariadb)
# shellcheck disable=SC2086
gcc -std=c99 -Wall -Wextra -pedantic -Werror ${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-} \
  "$here/c_abi_test.c" -o "$HOOK_ENV_SCRATCH/c_abi_test" $flags
readelf -d "$HOOK_ENV_SCRATCH/c_abi_test" | grep -q 'NEEDED.*\[libroom_outbox_hook.so.1\]' ||
  hook_env_fail "c_abi_test does not link libroom_outbox_hook.so.1"
# Password files for the configuration warnings (root over the socket ignores the password).
printf 'unused-by-root\n' >"$HOOK_ENV_SCRATCH/group-readable-password"
chmod 0640 "$HOOK_ENV_SCRATCH/group-readable-password"
printf 'unused-by-root\n' >"$HOOK_ENV_SCRATCH/owner-only-password"
chmod 0600 "$HOOK_ENV_SCRATCH/owner-only-password"
"$HOOK_ENV_SCRATCH/c_abi_test" "$HOOK_ENV_UP_CONFIG" "$HOOK_ENV_DOWN_CONFIG" "$HOOK_ENV_SOCKET" \
  "$HOOK_ENV_DATABASE" "$HOOK_ENV_SCRATCH"
