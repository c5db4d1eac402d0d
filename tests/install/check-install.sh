#!/usr/bin/env bash
# Installs the build into a scratch DESTDIR and builds tests/install/consumer.cc against it the
# way a room-service would: `pkg-config --cflags --libs room_outbox_hook`. Then runs it.
set -euo pipefail
build=$(cd "${1:?usage: check-install.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

prefix=/usr/local
DESTDIR="$scratch/root" cmake --install "$build" --prefix "$prefix" >/dev/null
root="$scratch/root$prefix"
for f in bin/outbox-relay bin/room-sim lib/libroom_outbox_hook.a include/room_outbox/hook.h \
         share/room-outbox/schema/002_room_outbox.sql share/room-outbox/conf/relay.toml \
         share/room-outbox/systemd/outbox-relay.service share/room-outbox/sim/room_snapshot.sql; do
  [ -e "$root/$f" ] || { echo "check-install: missing $prefix/$f" >&2; exit 1; }
done
# The public headers must compile without any third-party header.
if grep -hE '#include <(mysql|curl|spdlog|toml|tl/|nlohmann)' "$root"/include/room_outbox/*.h; then
  echo "check-install: a public header includes a third-party header" >&2
  exit 1
fi

# The installed .pc names the install prefix; point it at the scratch copy.
mkdir -p "$scratch/pc"
sed "s#^prefix=.*#prefix=$root#" "$root/lib/pkgconfig/room_outbox_hook.pc" \
  >"$scratch/pc/room_outbox_hook.pc"
flags=$(PKG_CONFIG_PATH="$scratch/pc" pkg-config --cflags --libs room_outbox_hook)
# ROOM_OUTBOX_CONSUMER_CXXFLAGS: a sanitizer build's flags (cmake/sanitizers.cmake), which a
# consumer of the sanitized hook needs as well.
# shellcheck disable=SC2086
g++ "$src/tests/install/consumer.cc" -o "$scratch/consumer" ${ROOM_OUTBOX_CONSUMER_CXXFLAGS:-} $flags

set +e
out=$("$scratch/consumer" "$scratch/no-such-mysqld.sock")
rc=$?
set -e
echo "$out"
if [ "$rc" -ne 3 ] || [[ "$out" != *"no-such-mysqld.sock"* ]]; then
  echo "check-install: consumer exited $rc; expected 3 and the socket named in the error" >&2
  exit 1
fi
echo "check-install: installed hook compiles, links and runs from pkg-config"
