#!/usr/bin/env bash
# The ABI check of libroom_outbox_hook.so (STYLE rule 78): abidiff (abigail-tools) compares the
# library of this build with the committed baseline of the first release of its SONAME,
# tests/abi/libroom_outbox_hook.so.1.abi.xz (abidw of the release build, public types only).
# Added symbols and compatible changes pass (and are listed); an incompatible change (a symbol
# gone, a signature or an exported type's layout changed) fails unless SOVERSION was bumped, in
# which case a baseline for the new SONAME belongs here. Regenerate it with --update.
#
#   tests/abi/check-abi.sh BUILD_DIR [--update]
set -euo pipefail
build=$(cd "${1:?usage: check-abi.sh BUILD_DIR [--update]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
headers="$here/../../hook/include/room_outbox"
so=$(readlink -f "$build/libroom_outbox_hook.so")
soname=$(readelf -d "$so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
baseline="$here/$soname.abi.xz"

if [ "${2:-}" = "--update" ]; then
  abidw --headers-dir "$headers" --drop-private-types --no-corpus-path --out-file "${baseline%.xz}" "$so"
  xz -9 -f "${baseline%.xz}"
  echo "check-abi: wrote $baseline"
  exit 0
fi
if [ ! -e "$baseline" ]; then
  echo "check-abi: no baseline for $soname ($baseline): a new SONAME needs one (--update)" >&2
  exit 1
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
xz -dc "$baseline" >"$scratch/baseline.abi"
set +e
abidiff --headers-dir2 "$headers" --drop-private-types "$scratch/baseline.abi" "$so" \
  >"$scratch/report" 2>&1
rc=$?
set -e
cat "$scratch/report"
# abidiff's exit status is a bit field: 1 error, 2 usage, 4 an ABI change, 8 an incompatible one.
if (( rc & 3 )); then
  echo "check-abi: abidiff failed (exit $rc)" >&2
  exit 1
fi
# abidiff counts a public struct's new size or moved members as a change, not an incompatible
# one (exit bit 4, not 8); a caller compiled against the old headers allocates the old layout, so
# here it is incompatible.
if (( rc & 4 )) && grep -qE 'type size changed|offset changed' "$scratch/report"; then
  rc=$(( rc | 8 ))
fi
if (( rc & 8 )); then
  echo "check-abi: $soname changed incompatibly against its baseline: bump ROOM_OUTBOX_SOVERSION" \
    "(hook/src/sources.cmake) and commit a baseline for the new SONAME" >&2
  exit 1
fi
echo "check-abi: $soname keeps the ABI of its baseline$( (( rc & 4 )) && echo ' (compatible additions above)')"
