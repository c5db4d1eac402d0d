#!/usr/bin/env bash
# make deb: builds the Debian packages with dpkg-buildpackage from a copy of this tree under
# OUT_DIR (so nothing is written beside the repository or into it outside the build folder),
# runs lintian on them and prints its verdict and the package sizes.
#
#   scripts/build-deb.sh OUT_DIR [JOBS]
#
# OUT_DIR/ccache keeps the compiler cache between runs, so an unchanged rebuild is cheap.
set -euo pipefail
out=$(mkdir -p "${1:?usage: build-deb.sh OUT_DIR [JOBS]}" && cd "$1" && pwd)
jobs=${2:-$(nproc)}
src=$(cd "$(dirname "$0")/.." && pwd)
cd "$src"

# The package version is the changelog's; it must be the version CMake builds into the binary.
version=$(dpkg-parsechangelog -S Version)
project_version=$(sed -n 's/^project(room_outbox VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
if [ "${version%%-*}" != "$project_version" ]; then
  echo "build-deb: debian/changelog says $version, CMakeLists.txt $project_version" >&2
  exit 1
fi

# A fresh copy of the tree: the files git knows (tracked and new, not ignored) that exist.
rm -rf "$out"/room-outbox-* "$out"/room-outbox_* "$out"/*.deb
tree="$out/room-outbox-$version"
mkdir -p "$tree"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$tree"
else
  tar --exclude='./build*' --exclude='./.git' -cf - . | tar -xf - -C "$tree"
fi

# The source package too (from the clean copy), only so that lintian checks debian/ as a source.
(cd "$out" && dpkg-source -b "$(basename "$tree")" >"$out/source.log" 2>&1) ||
  { cat "$out/source.log" >&2; echo "build-deb: dpkg-source -b failed" >&2; exit 1; }

started=$SECONDS
echo "build-deb: dpkg-buildpackage -us -uc -b in $tree (parallel=$jobs)"
(
  cd "$tree"
  export DEB_BUILD_OPTIONS="parallel=$jobs ${DEB_BUILD_OPTIONS:-}"
  if command -v ccache >/dev/null; then
    export CMAKE_CXX_COMPILER_LAUNCHER=ccache CCACHE_DIR="$out/ccache"
    ccache --zero-stats >/dev/null
  fi
  dpkg-buildpackage -us -uc -b
) >"$out/build.log" 2>&1 || {
  tail -n 60 "$out/build.log" >&2
  echo "build-deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
  exit 1
}
echo "build-deb: built in $((SECONDS - started)) s (log: $out/build.log)"
if command -v ccache >/dev/null; then
  CCACHE_DIR="$out/ccache" ccache --show-stats | grep -E '^ *(Hits|Misses):' || true
fi

changes=("$out"/room-outbox_"${version}"_*.changes)
dsc="$out/room-outbox_${version}.dsc"
echo "build-deb: lintian $(basename "${changes[0]}") $(basename "$dsc")"
set +e
lintian --fail-on error,warning --display-info --show-overrides "${changes[0]}" "$dsc"
verdict=$?
set -e

echo "build-deb: packages in $out"
for deb in "$out"/*.deb; do
  printf '  %-48s %8s bytes  installed %6s KiB\n' "$(basename "$deb")" "$(stat -c %s "$deb")" \
    "$(dpkg-deb -f "$deb" Installed-Size)"
done
if [ "$verdict" -ne 0 ]; then
  echo "build-deb: lintian: FAILED (errors or warnings above)" >&2
  exit 1
fi
echo "build-deb: lintian: passed (no errors, no warnings)"
