#!/usr/bin/env bash
# Installs the build into a scratch DESTDIR and builds tests/install/consumer.cc against it the
# way a room-service would, twice: with `pkg-config --cflags --libs room_outbox_hook`
# and with CMake's `find_package(room_outbox_hook)` -> room_outbox::hook. Runs both. The
# installed tree must be relocatable: it is installed under one prefix and used from another
# directory, and installing under a second prefix rewrites the units' ExecStart.
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
         share/room-outbox/schema/002_room_outbox.sql share/room-outbox/schema/003_parked.sql \
         share/room-outbox/conf/relay.toml share/room-outbox/conf/alerts.yml \
         share/room-outbox/systemd/outbox-relay.service \
         share/room-outbox/systemd/room-outbox-purge.service \
         share/room-outbox/systemd/room-outbox-purge.timer \
         share/room-outbox/sim/room_snapshot.sql share/doc/room-outbox/LICENSE \
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
if grep -n "$prefix\|-std=" "$pc" "$root/$libdir/cmake/room_outbox_hook/"*.cmake; then
  echo "check-install: an install prefix or -std= is baked into the package files" >&2
  exit 1
fi
# A static-only library: its link dependencies are Requires (see cmake/room_outbox_hook.pc.in).
grep -q '^Requires: libmariadb libcurl libcrypto zlib tomlplusplus$' "$pc" ||
  { echo "check-install: Requires is not libmariadb libcurl libcrypto zlib tomlplusplus" >&2; exit 1; }
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

# 1. pkg-config.
flags=$(PKG_CONFIG_PATH="$root/$libdir/pkgconfig" pkg-config --cflags --libs room_outbox_hook)
# ROOM_OUTBOX_CONSUMER_CXXFLAGS: a sanitizer build's flags (cmake/sanitizers.cmake), which a
# consumer of the sanitized hook needs as well.
# shellcheck disable=SC2086
g++ "$src/tests/install/consumer.cc" -o "$scratch/consumer" ${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-} $flags

# 2. CMake: find_package(room_outbox_hook) -> room_outbox::hook.
mkdir -p "$scratch/cmake-consumer"
cat >"$scratch/cmake-consumer/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.16)
project(room_outbox_consumer LANGUAGES CXX)
find_package(room_outbox_hook 0.1 REQUIRED)
add_executable(consumer "$src/tests/install/consumer.cc")
target_link_libraries(consumer PRIVATE room_outbox::hook)
CMAKE
cmake -S "$scratch/cmake-consumer" -B "$scratch/cmake-consumer/build" \
  -DCMAKE_PREFIX_PATH="$root" -DCMAKE_CXX_FLAGS="${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-}" \
  >"$scratch/cmake-consumer.log" 2>&1 ||
  { cat "$scratch/cmake-consumer.log" >&2; echo "check-install: find_package failed" >&2; exit 1; }
cmake --build "$scratch/cmake-consumer/build" >>"$scratch/cmake-consumer.log" 2>&1 ||
  { cat "$scratch/cmake-consumer.log" >&2; echo "check-install: CMake consumer build failed" >&2; exit 1; }

for consumer in "$scratch/consumer" "$scratch/cmake-consumer/build/consumer"; do
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
# or parked rows, operator statements, pacing, the worker) is in the consumer. Each name must be
# in the relay library of this build, so the check cannot pass because a name changed.
relay_symbols='ClaimDue|PlanRooms|MarkFailed|MarkParked|RequeueRoom|OpsStore::Purge|RoomPacing|OutboxWorker|kClaimWindow'
nm -C "$build/libroom_outbox_relay.a" >"$scratch/relay.nm" 2>/dev/null
for name in ${relay_symbols//|/ }; do
  grep -q "$name" "$scratch/relay.nm" ||
    { echo "check-install: $name is not in libroom_outbox_relay.a any more; update the list" >&2; exit 1; }
done
leaked=$(nm -C "$scratch/consumer" | grep -E "$relay_symbols" || true)
if [ -n "$leaked" ]; then
  echo "check-install: the consumer holds relay symbols:" >&2
  echo "$leaked" >&2
  exit 1
fi
echo "check-install: installed hook compiles, links and runs via pkg-config and find_package;" \
  "the consumer holds $(nm -C "$scratch/consumer" | grep -cE ' [TtWw] room_outbox::') hook" \
  "functions and no relay symbol"
