#!/usr/bin/env bash
# make hook-only-check: the hook alone (-DROOM_OUTBOX_BUILD_RELAY=OFF) configures, builds and
# installs on a machine without the relay's dependencies. A fresh BUILD_DIR is configured with
# each of them made unfindable:
#   cpp-httplib, libsystemd  a pkg-config search path holding every .pc file of this machine but
#                            theirs (PKG_CONFIG_LIBDIR)
#   CLI11, spdlog, GTest     CMAKE_DISABLE_FIND_PACKAGE_<name>
#   asciidoctor              ROOM_OUTBOX_ASCIIDOCTOR names a stand-in that fails the build and
#                            leaves a mark if anything runs it (find_program searches the system
#                            directories whatever PATH says, and again for a -NOTFOUND value)
# Then the whole build (`all`) and an install into a scratch DESTDIR, and the checks: the hook's
# files are installed and nothing of the relay is built or installed; no compiled source
# included a header of those libraries (the compiler's dependency files say so); the shared
# library needs none of them; a consumer builds through each pkg-config file and runs.
#
#   usage: check-hook-only.sh BUILD_DIR [CMAKE_ARGS...]     (JOBS: parallel jobs, default nproc)
set -euo pipefail
build=${1:?usage: check-hook-only.sh BUILD_DIR [CMAKE_ARGS...]}
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
jobs=${JOBS:-$(nproc)}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "check-hook-only: $*" >&2
  exit 1
}

# pkg-config without cpp-httplib and libsystemd, and with everything else of this machine.
pc_dir="$scratch/pkgconfig"
mkdir -p "$pc_dir"
IFS=: read -ra pc_path <<<"$(pkg-config --variable pc_path pkg-config)"
for dir in "${pc_path[@]}"; do
  for pc in "$dir"/*.pc; do
    [ -e "$pc" ] || continue
    name=$(basename "$pc")
    case "$name" in cpp-httplib.pc | libsystemd.pc) continue ;; esac
    [ -e "$pc_dir/$name" ] || ln -s "$pc" "$pc_dir/$name"
  done
done
export PKG_CONFIG_LIBDIR="$pc_dir"
unset PKG_CONFIG_PATH
for module in cpp-httplib libsystemd; do
  if pkg-config --exists "$module"; then fail "$module is still visible to pkg-config"; fi
done
pkg-config --exists libmariadb || fail "libmariadb is not visible to pkg-config"

marker="$scratch/asciidoctor-ran"
mkdir -p "$scratch/bin"
cat >"$scratch/bin/asciidoctor" <<SH
#!/bin/sh
echo "check-hook-only: asciidoctor was run: \$*" >&2
touch "$marker"
exit 1
SH
chmod +x "$scratch/bin/asciidoctor"

rm -rf "$build"
started=$SECONDS
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" \
  -DROOM_OUTBOX_BUILD_RELAY=OFF -DROOM_OUTBOX_BUILD_TESTS=OFF \
  -DPKG_CONFIG_USE_CMAKE_PREFIX_PATH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON -DCMAKE_DISABLE_FIND_PACKAGE_spdlog=ON \
  -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON \
  -DROOM_OUTBOX_ASCIIDOCTOR="$scratch/bin/asciidoctor" >"$scratch/configure.log" 2>&1 ||
  { cat "$scratch/configure.log" >&2; fail "configure with -DROOM_OUTBOX_BUILD_RELAY=OFF failed"; }
cmake --build "$build" -j "$jobs" >"$scratch/build.log" 2>&1 ||
  { tail -n 40 "$scratch/build.log" >&2; fail "build failed"; }
[ ! -e "$marker" ] || fail "the build ran asciidoctor"
echo "check-hook-only: configured and built in $((SECONDS - started)) s"

prefix=/usr/local
DESTDIR="$scratch/root" cmake --install "$build" --prefix "$prefix" >/dev/null
root="$scratch/root$prefix"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
libdir=${libdir:-lib}
for f in "$libdir/libroom_outbox_hook.a" "$libdir/libroom_outbox_hook.so" \
         "$libdir/libroom_outbox_hook.so.1" \
         include/room_outbox/hook.h include/room_outbox/c.h include/room_outbox/options.h \
         include/room_outbox/error.h include/room_outbox/envelope.h include/room_outbox/export.h \
         "$libdir/pkgconfig/room_outbox_hook.pc" "$libdir/pkgconfig/room_outbox_hook-static.pc" \
         "$libdir/cmake/room_outbox_hook/room_outbox_hookConfig.cmake" \
         "$libdir/cmake/room_outbox_hook/room_outbox_hookConfigVersion.cmake" \
         share/doc/room-outbox/LICENSE; do
  [ -e "$root/$f" ] || fail "missing $prefix/$f"
done
for f in bin share/man share/room-outbox share/doc/room-outbox/RUNBOOK.md; do
  [ ! -e "$root/$f" ] || fail "$prefix/$f is installed by the hook alone"
done
built=$(find "$build" -type f \( -name outbox-relay -o -name room-sim -o -name im-stub \
  -o -name 'libroom_outbox_relay.a' -o -name '*_tests' -o -name 'outbox-relay*.[0-9]' \) -print)
[ -z "$built" ] || fail "the hook alone built the relay's files: $built"

# No source of the build included a header of the hidden libraries (GCC's dependency files of
# every object list each header it read).
depfiles=$(find "$build/CMakeFiles" -name '*.o.d')
for target in room_outbox_core room_outbox_hook; do
  if ! echo "$depfiles" | grep -q "/$target.dir/"; then
    fail "no dependency files of $target in $build/CMakeFiles"
  fi
done
# shellcheck disable=SC2086
included=$(grep -lE '/httplib\.h|/systemd/sd-|/CLI/|/spdlog/' $depfiles || true)
[ -z "$included" ] || fail "these objects include a header of the relay's libraries: $included"
needed=$(readelf -d "$root/$libdir/libroom_outbox_hook.so.1" | grep NEEDED)
if echo "$needed" | grep -E 'systemd|spdlog|httplib'; then
  fail "libroom_outbox_hook.so.1 needs a library of the relay"
fi

# A room service builds against what was installed: shared and static, through pkg-config.
for package in room_outbox_hook room_outbox_hook-static; do
  flags=$(PKG_CONFIG_PATH="$root/$libdir/pkgconfig" pkg-config --cflags --libs "$package")
  # shellcheck disable=SC2086
  g++ "$src/tests/install/consumer.cc" -o "$scratch/consumer-$package" $flags ||
    fail "the consumer does not build through $package.pc"
  set +e
  out=$(LD_LIBRARY_PATH="$root/$libdir" "$scratch/consumer-$package" "$scratch/no-such.sock")
  rc=$?
  set -e
  if [ "$rc" -ne 3 ] || [[ "$out" != *"no-such.sock"* ]]; then
    fail "consumer-$package exited $rc ($out); expected 3 and the socket named in the error"
  fi
done
echo "check-hook-only: the hook alone configures without cpp-httplib, libsystemd, CLI11, spdlog," \
  "GTest and asciidoctor, builds, installs $(find "$root" -type f | wc -l) files and no relay" \
  "file, and links a consumer through both pkg-config files, in $((SECONDS - started)) s"
