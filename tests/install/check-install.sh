#!/usr/bin/env bash
# Installs the build into a scratch DESTDIR and builds tests/install/consumer.cc against it the
# way a room-service would, four times: against the shared library with
# `pkg-config --cflags --libs room_outbox_hook` and CMake's room_outbox::hook, and against the
# static archive with room_outbox_hook-static and room_outbox::hook_static. Runs all four. The
# installed tree must be relocatable: it is installed under one prefix and used from another
# directory, and installing under a second prefix rewrites the units' ExecStart. Prints the number
# of symbols the shared library exports.
set -euo pipefail
build=$(cd "${1:?usage: check-install.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

prefix=/usr/local
DESTDIR="$scratch/root" cmake --install "$build" --prefix "$prefix" >/dev/null
root="$scratch/root$prefix"
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:PATH=//p' "$build/CMakeCache.txt")
libdir=${libdir:-lib}
for f in bin/outbox-relay bin/room-sim "$libdir/libroom_outbox_hook.a" include/room_outbox/hook.h \
         "$libdir/libroom_outbox_hook.so" "$libdir/libroom_outbox_hook.so.1" \
         include/room_outbox/c.h include/room_outbox/export.h \
         "$libdir/pkgconfig/room_outbox_hook-static.pc" \
         share/room-outbox/schema/000_schema_version.sql share/room-outbox/schema/003_parked.sql \
         share/room-outbox/conf/relay.toml share/room-outbox/conf/alerts.yml \
         share/room-outbox/systemd/outbox-relay.service \
         share/room-outbox/systemd/room-outbox-purge.service \
         share/room-outbox/systemd/room-outbox-purge.timer \
         share/room-outbox/sim/room_snapshot.sql share/doc/room-outbox/LICENSE \
         share/man/man8/outbox-relay.8 share/man/man5/outbox-relay.toml.5 \
         "$libdir/pkgconfig/room_outbox_hook.pc" \
         "$libdir/cmake/room_outbox_hook/room_outbox_hookConfig.cmake" \
         "$libdir/cmake/room_outbox_hook/room_outbox_hookConfigVersion.cmake"; do
  [ -e "$root/$f" ] || { echo "check-install: missing $prefix/$f" >&2; exit 1; }
done
# The public headers must compile without any third-party header.
if grep -hE '#include <(mysql|curl|spdlog|toml|tl/|nlohmann)' "$root"/include/room_outbox/*.h; then
  echo "check-install: a public header includes a third-party header" >&2
  exit 1
fi

# Relocatable: no install prefix in the .pc or the CMake config, no -std= imposed on consumers.
pc="$root/$libdir/pkgconfig/room_outbox_hook.pc"
static_pc="$root/$libdir/pkgconfig/room_outbox_hook-static.pc"
if grep -n "$prefix\|-std=" "$pc" "$static_pc" "$root/$libdir/cmake/room_outbox_hook/"*.cmake; then
  echo "check-install: an install prefix or -std= is baked into the package files" >&2
  exit 1
fi
# The shared library brings its C libraries itself; every link of the archive needs them
# (cmake/room_outbox_hook*.pc.in).
c_libraries='libmariadb libcurl libcrypto zlib tomlplusplus'
grep -q "^Requires.private: $c_libraries\$" "$pc" ||
  { echo "check-install: room_outbox_hook.pc: Requires.private is not $c_libraries" >&2; exit 1; }
grep -q "^Requires: $c_libraries\$" "$static_pc" ||
  { echo "check-install: room_outbox_hook-static.pc: Requires is not $c_libraries" >&2; exit 1; }
# The shared library: its SONAME, and only the C ABI and the C++ API exported, all in the
# version node ROOM_OUTBOX_1.
so="$root/$libdir/libroom_outbox_hook.so.1"
readelf -d "$so" | grep -q 'Library soname: \[libroom_outbox_hook.so.1\]' ||
  { echo "check-install: libroom_outbox_hook.so.1 has another SONAME" >&2; exit 1; }
exported=$(nm -D --defined-only "$so" | awk '$2 != "A" {print $3}')
stray=$(echo "$exported" | grep -v '^room_outbox_[a-z0-9_]*@@ROOM_OUTBOX_1$' |
        c++filt | grep -v '^room_outbox::[^ ]*.*@@ROOM_OUTBOX_1$' || true)
if [ -n "$stray" ]; then
  echo "check-install: libroom_outbox_hook.so.1 exports more than the hook's API:" >&2
  echo "$stray" >&2
  exit 1
fi
# Nor does it carry the relay's SQL: no claim, lease, mark-failed, park, requeue or purge text
# (outbox_sql.h gives each statement an entry of its own, so only what the hook uses is linked).
relay_sql="LIMIT \\? FOR UPDATE SKIP LOCKED|retry_count = retry_count \\+ 1|status = 'parked'|DELETE FROM room_outbox WHERE|DELETE FROM room_command_log"
if strings "$so" "$root/$libdir/libroom_outbox_hook.a" | grep -E "$relay_sql"; then
  echo "check-install: the installed hook carries the relay's SQL (above)" >&2
  exit 1
fi
# The unit runs the binary of the prefix it was installed under.
grep -q "^ExecStart=$prefix/bin/outbox-relay --config" \
  "$root/share/room-outbox/systemd/outbox-relay.service" ||
  { echo "check-install: outbox-relay.service ExecStart is not under $prefix" >&2; exit 1; }
DESTDIR="$scratch/opt-root" cmake --install "$build" --prefix /opt/room-outbox >/dev/null
for unit in outbox-relay.service room-outbox-purge.service; do
  grep -q "^ExecStart=/opt/room-outbox/bin/outbox-relay " \
    "$scratch/opt-root/opt/room-outbox/share/room-outbox/systemd/$unit" ||
    { echo "check-install: $unit ExecStart does not follow --prefix /opt/room-outbox" >&2; exit 1; }
done

# Use the tree from somewhere else than where it was installed for: a moved copy.
moved="$scratch/moved"
mv "$scratch/root" "$moved"
root="$moved$prefix"
so="$root/$libdir/libroom_outbox_hook.so.1"

# 1. pkg-config: the shared library (room_outbox_hook) and the archive (room_outbox_hook-static).
# ROOM_OUTBOX_CONSUMER_CXXFLAGS: a sanitizer build's flags (cmake/sanitizers.cmake), which a
# consumer of the sanitized hook needs as well.
for package in room_outbox_hook room_outbox_hook-static; do
  flags=$(PKG_CONFIG_PATH="$root/$libdir/pkgconfig" pkg-config --cflags --libs "$package")
  # shellcheck disable=SC2086
  g++ "$src/tests/install/consumer.cc" -o "$scratch/consumer-$package" \
    ${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-} $flags
done
readelf -d "$scratch/consumer-room_outbox_hook" | grep -q 'NEEDED.*\[libroom_outbox_hook.so.1\]' ||
  { echo "check-install: the pkg-config consumer does not link libroom_outbox_hook.so.1" >&2; exit 1; }
if readelf -d "$scratch/consumer-room_outbox_hook-static" | grep -q 'libroom_outbox_hook.so'; then
  echo "check-install: the room_outbox_hook-static consumer links the shared library" >&2
  exit 1
fi

# 2. CMake: find_package(room_outbox_hook) -> room_outbox::hook and room_outbox::hook_static.
for target in hook hook_static; do
  dir="$scratch/cmake-$target"
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(room_outbox_consumer LANGUAGES CXX)
find_package(room_outbox_hook 0.1 REQUIRED)
add_executable(consumer "$src/tests/install/consumer.cc")
target_link_libraries(consumer PRIVATE room_outbox::$target)
CMAKE
  cmake -S "$dir" -B "$dir/build" \
    -DCMAKE_PREFIX_PATH="$root" -DCMAKE_CXX_FLAGS="${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-}" \
    >"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; echo "check-install: find_package failed" >&2; exit 1; }
  cmake --build "$dir/build" >>"$dir.log" 2>&1 ||
    { cat "$dir.log" >&2; echo "check-install: CMake consumer of $target failed" >&2; exit 1; }
done

export LD_LIBRARY_PATH="$root/$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for consumer in "$scratch/consumer-room_outbox_hook" "$scratch/consumer-room_outbox_hook-static" \
                "$scratch/cmake-hook/build/consumer" "$scratch/cmake-hook_static/build/consumer"; do
  set +e
  out=$("$consumer" "$scratch/no-such-mysqld.sock")
  rc=$?
  set -e
  echo "$out"
  if [ "$rc" -ne 3 ] || [[ "$out" != *"no-such-mysqld.sock"* ]]; then
    echo "check-install: $consumer exited $rc; expected 3 and the socket named in the error" >&2
    exit 1
  fi
done
# A room service links no relay code: none of the relay's functions (claim, plan, marks of failed
# or parked rows, operator statements, pacing, the worker, migrations) is in the consumer. Each
# name must be in the relay library of this build, so the check cannot pass because a name
# changed; each is a function with external linkage, which no optimisation level inlines away.
# (The relay's SQL text is checked above.)
relay_symbols='ClaimDue|PlanClaim|MarkFailed|MarkParked|RequeueRoom|OpsStore::Purge|RoomPacing|OutboxWorker|MigrateToLatest'
nm -C "$build/libroom_outbox_relay.a" >"$scratch/relay.nm" 2>/dev/null
for name in ${relay_symbols//|/ }; do
  grep -q "$name" "$scratch/relay.nm" ||
    { echo "check-install: $name is not in libroom_outbox_relay.a any more; update the list" >&2; exit 1; }
done
# The static consumer and the shared library (its whole symbol table, not only the exports).
for binary in "$scratch/consumer-room_outbox_hook-static" "$so"; do
  nm -C "$binary" >"$scratch/binary.nm" || { echo "check-install: nm $binary failed" >&2; exit 1; }
  leaked=$(grep -E "$relay_symbols" "$scratch/binary.nm" || true)
  if [ -n "$leaked" ]; then
    echo "check-install: $binary holds relay symbols:" >&2
    echo "$leaked" >&2
    exit 1
  fi
done
echo "check-install: installed hook compiles, links and runs via pkg-config and find_package," \
  "shared and static; the static consumer holds" \
  "$(nm -C "$scratch/consumer-room_outbox_hook-static" | grep -cE ' [TtWw] room_outbox::') hook" \
  "functions, libroom_outbox_hook.so.1 exports $(echo "$exported" | wc -l) symbols" \
  "($(echo "$exported" | grep -c '^room_outbox_') C, $(echo "$exported" | grep -vc '^room_outbox_') C++)," \
  "neither holds a relay symbol"
