#!/usr/bin/env bash
# Installs the packages `make deb` built on THIS machine (root), checks them as an operator and a
# room-service developer would, purges them and checks that no file of theirs is left:
#   - dpkg -i of every package of debian/control; the wake socket's group room-outbox-wake exists;
#     outbox-relay --version is the package version;
#   - systemd-analyze verify of the installed units (their Documentation= pages included);
#   - man -w finds outbox-relay(8) and outbox-relay.toml(5); relay.toml is a conffile;
#   - README.Debian's steps: write the two secrets, --check-config refuses the shipped placeholder
#     sdk_app_id and accepts the config once an app id is set;
#   - tests/install/consumer.cc builds against the installed dev package (pkg-config and CMake),
#     and a C99 program runs against the shared library of libroom-outbox-hook1;
#   - dpkg --purge; the packages' files, /etc/room-outbox and every file that appeared under
#     /etc, /usr, /lib and /var/lib/systemd since the install are gone again.
#
#   tests/install/check-deb.sh DEB_DIR
set -euo pipefail
debs=$(cd "${1:?usage: check-deb.sh DEB_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
# A failed check must not leave the packages on the machine: they are purged on any exit once
# installed (the purge check below does it on success and then clears `installed`).
installed=()
cleanup() {
  if [ ${#installed[@]} -gt 0 ]; then dpkg --purge "${installed[@]}" >/dev/null 2>&1 || true; fi
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "check-deb: $*" >&2; exit 1; }
step() { echo "check-deb: $*"; }

[ "$(id -u)" -eq 0 ] || fail "run as root: it installs and purges packages on this machine"
version=$(cd "$src" && dpkg-parsechangelog -S Version)
mapfile -t packages < <(sed -n 's/^Package: //p' "$src/debian/control")
files=()
for p in "${packages[@]}"; do
  f=("$debs/${p}_${version}_"*.deb)
  [ -e "${f[0]}" ] || fail "no ${p}_${version}_*.deb in $debs: run make deb"
  files+=("${f[0]}")
  if dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null | grep -qv '^not-installed$'; then
    fail "$p is already on this machine: dpkg --purge ${packages[*]} first"
  fi
done

# Every path where a package or its maintainer scripts write (/var/lib/systemd: the state of
# deb-systemd-helper); the dpkg database is checked on its own below.
snapshot() {
  find /etc /usr /lib /var/lib/systemd -xdev 2>/dev/null | LC_ALL=C sort
}
snapshot >"$scratch/before"

step "dpkg -i ${files[*]##*/}"
dpkg -i "${files[@]}" >"$scratch/install.log" 2>&1 ||
  { cat "$scratch/install.log" >&2; fail "dpkg -i failed (missing dependencies: make deps)"; }
installed=("${packages[@]}")
snapshot >"$scratch/installed"
for p in "${packages[@]}"; do dpkg -L "$p"; done | LC_ALL=C sort -u >"$scratch/owned"

getent group room-outbox-wake >/dev/null ||
  fail "the install did not create the group room-outbox-wake (debian/outbox-relay.sysusers)"
step "group room-outbox-wake: $(getent group room-outbox-wake)"

out=$(outbox-relay --version)
step "outbox-relay --version: $out"
[ "$out" = "outbox-relay ${version%%-*}" ] || fail "--version says '$out', the package is $version"

units=(outbox-relay.service room-outbox-purge.service room-outbox-purge.timer)
for u in "${units[@]}"; do
  [ -f "/lib/systemd/system/$u" ] || fail "/lib/systemd/system/$u is not installed"
done
grep -qx 'ExecStart=/usr/bin/outbox-relay --config /etc/room-outbox/relay.toml' \
  /lib/systemd/system/outbox-relay.service || fail "outbox-relay.service does not run /usr/bin"
step "systemd-analyze verify ${units[*]}"
verify=$(cd /lib/systemd/system && SYSTEMD_LOG_LEVEL=notice systemd-analyze verify "${units[@]}" 2>&1) ||
  { echo "$verify" >&2; fail "systemd-analyze verify failed"; }
if grep -E 'outbox|room-outbox' <<<"$verify"; then fail "systemd-analyze verify warns about the units"; fi
if systemctl is-enabled outbox-relay.service >/dev/null 2>&1; then
  fail "outbox-relay.service is enabled by the install; it must wait for its config"
fi

for page in "8 outbox-relay" "5 outbox-relay.toml"; do
  # shellcheck disable=SC2086
  path=$(man -w $page) || fail "man -w $page finds no page"
  step "man -w $page: $path"
  [[ "$path" == /usr/share/man/* ]] || fail "man -w $page is not the package's page"
done
dpkg-query -W -f='${Conffiles}\n' outbox-relay | grep -q '^ /etc/room-outbox/relay.toml ' ||
  fail "/etc/room-outbox/relay.toml is not a conffile"

step "README.Debian: the two secrets, then outbox-relay --check-config"
install -m 600 /dev/null /etc/room-outbox/mysql-password
printf 'not-a-real-key\n' | install -m 600 /dev/stdin /etc/room-outbox/tim-secret-key
# As shipped, the config carries the placeholder app id: refused, naming the key.
if outbox-relay --check-config >"$scratch/check-config.out" 2>&1; then
  fail "--check-config accepts the shipped placeholder sdk_app_id"
fi
grep -q 'tencent_im.sdk_app_id = 1400000000 is the shipped template.s placeholder' \
  "$scratch/check-config.out" || { cat "$scratch/check-config.out" >&2; fail "no placeholder error"; }
step "README.Debian: sdk_app_id set, then outbox-relay --check-config"
sed -i 's/^sdk_app_id = 1400000000$/sdk_app_id = 1400012345/' /etc/room-outbox/relay.toml
outbox-relay --check-config >"$scratch/check-config.out" 2>&1 ||
  { cat "$scratch/check-config.out" >&2; fail "--check-config refuses the shipped relay.toml"; }

step "consumer.cc against the installed hook: pkg-config and find_package"
# shellcheck disable=SC2046
g++ -std=c++17 "$src/tests/install/consumer.cc" -o "$scratch/consumer" \
  $(pkg-config --cflags --libs room_outbox_hook)
mkdir -p "$scratch/cmake"
cat >"$scratch/cmake/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(room_outbox_consumer LANGUAGES CXX)
find_package(room_outbox_hook 0.1 REQUIRED)
add_executable(consumer "$src/tests/install/consumer.cc")
target_link_libraries(consumer PRIVATE room_outbox::hook)
CMAKE
{ cmake -S "$scratch/cmake" -B "$scratch/cmake/build" && cmake --build "$scratch/cmake/build"; } \
  >"$scratch/cmake.log" 2>&1 || { cat "$scratch/cmake.log" >&2; fail "CMake consumer build failed"; }
for consumer in "$scratch/consumer" "$scratch/cmake/build/consumer"; do
  set +e
  said=$("$consumer" "$scratch/no-such-mysqld.sock")
  rc=$?
  set -e
  [ "$rc" -eq 3 ] && [[ "$said" == *no-such-mysqld.sock* ]] ||
    fail "$consumer exited $rc ('$said'); expected 3 and the socket named"
done

step "a C program against the installed shared library (libroom-outbox-hook1)"
cat >"$scratch/c_consumer.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "room_outbox/c.h"
int main(void) {
  room_outbox_options *opts = room_outbox_options_new();
  room_outbox_error *err = NULL;
  int rc = 0;
  if (room_outbox_c_version() != ROOM_OUTBOX_C_VERSION) rc = 1;
  if (room_outbox_options_set(opts, "mysql.port", "0", 1, &err) == 0) rc = 2;
  if (err == NULL || strstr(room_outbox_error_message(err), "mysql.port") == NULL) rc = 3;
  printf("c version %08x, bad option: %s\n", (unsigned)room_outbox_c_version(),
         err != NULL ? room_outbox_error_message(err) : "(none)");
  room_outbox_error_free(err);
  room_outbox_options_destroy(opts);
  return rc;
}
C
# shellcheck disable=SC2046
gcc -std=c99 -Wall -Wextra -pedantic -Werror "$scratch/c_consumer.c" -o "$scratch/c_consumer" \
  $(pkg-config --cflags --libs room_outbox_hook)
linked=$(ldd "$scratch/c_consumer")
grep -Eq 'libroom_outbox_hook.so.1 => /(usr/)?lib/' <<<"$linked" ||
  fail "the C program does not load /usr/lib/*/libroom_outbox_hook.so.1"
"$scratch/c_consumer" || fail "the C program against the shared library failed ($?)"

step "dpkg --purge ${packages[*]}"
dpkg --purge "${packages[@]}" >"$scratch/purge.log" 2>&1 ||
  { cat "$scratch/purge.log" >&2; fail "dpkg --purge failed"; }
installed=()
snapshot >"$scratch/after"
# Left behind: what the packages own and did not exist before, and whatever appeared since the
# install began, that still exists.
comm -23 "$scratch/owned" "$scratch/before" >"$scratch/theirs"
# The account databases' backup copies (/etc/group- and the like, written by systemd-sysusers
# when it adds the wake group) are the system's, not the packages'; a system group stays after a
# purge, as Debian's policy has it.
comm -23 "$scratch/installed" "$scratch/before" | grep -Ev '^/etc/(group|gshadow|passwd|shadow)-$' \
  >>"$scratch/theirs" || true
find /etc/room-outbox >>"$scratch/theirs" 2>/dev/null || true
LC_ALL=C sort -u -o "$scratch/theirs" "$scratch/theirs"
left=$(comm -12 "$scratch/theirs" "$scratch/after")
for p in "${packages[@]}"; do
  left+=$'\n'$(ls /var/lib/dpkg/info/"$p".* /var/lib/dpkg/info/"$p":*.* 2>/dev/null || true)
done
left=$(sed '/^$/d' <<<"$left")
if [ -n "$left" ]; then
  echo "$left" >&2
  fail "the purge left the files above behind"
fi
echo "check-deb: installed, checked and purged ${packages[*]}; nothing left behind"
