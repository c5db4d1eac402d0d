#!/usr/bin/env bash
# The Debian packages holding the shared libraries that BINARY... link directly (their NEEDED
# entries), one per line, sorted: what the image's runtime stage installs, so the runtime has
# every library the binaries need and nothing of the build. apt brings what those libraries need.
#
#   deploy/runtime-packages.sh BINARY...
set -euo pipefail
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
for binary in "$@"; do
  objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }'
done | sort -u | while read -r soname; do
  package=$(dpkg -S "/usr/lib/$multiarch/$soname" 2>/dev/null ||
    dpkg -S "/lib/$multiarch/$soname" 2>/dev/null) ||
    { echo "runtime-packages.sh: no package holds $soname" >&2; exit 1; }
  echo "${package%%:*}"
done | sort -u
