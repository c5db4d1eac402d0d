#!/usr/bin/env bash
# Makes sure podman has the base image the Containerfiles in deploy/ start from,
# docker.io/library/debian:bookworm. When it is missing (no registry can be reached here), it is
# made from Debian's own archive: a minimal Debian 12 root filesystem by debootstrap (its .debs
# kept in /var/cache/apt/archives, so a second run downloads nothing), the apt sources of the
# official image, imported under the official name. Once there it is kept: the build cache of
# every image above it depends on the base's id, so it is never imported again.
#
#   scripts/base-image.sh [IMAGE]        (podman-env.sh must have been sourced, or podman work)
# A machine that reaches docker.io may `podman pull docker.io/library/debian:bookworm` instead.
set -euo pipefail
image=${1:-docker.io/library/debian:bookworm}
if podman image exists "$image"; then
  echo "base-image: $image present ($(podman image inspect --format '{{.Id}}' "$image" | cut -c1-12))"
  exit 0
fi
command -v debootstrap >/dev/null || { echo "base-image: debootstrap missing: make deps" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "base-image: debootstrap needs root" >&2; exit 1; }
started=$SECONDS
scratch=$(mktemp -d /var/tmp/base-image.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p /var/cache/apt/archives
echo "base-image: $image missing; debootstrap --variant=minbase bookworm (Debian's archive)"
debootstrap --variant=minbase --cache-dir=/var/cache/apt/archives bookworm "$scratch/root" \
  http://deb.debian.org/debian >"$scratch/debootstrap.log" 2>&1 || {
  tail -n 20 "$scratch/debootstrap.log" >&2
  echo "base-image: debootstrap failed" >&2
  exit 1
}
# As the official image: deb822 sources with the updates and security suites, no package lists.
rm -f "$scratch/root/etc/apt/sources.list"
cat >"$scratch/root/etc/apt/sources.list.d/debian.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
rm -rf "$scratch/root/var/lib/apt/lists/"* "$scratch/root/var/cache/apt/"*.bin
tar -C "$scratch/root" --numeric-owner -c . |
  podman import --quiet --change 'CMD ["bash"]' - "$image" >/dev/null
echo "base-image: $image imported in $((SECONDS - started)) s" \
  "($(podman image inspect --format '{{.Size}}' "$image" | awk '{printf "%d MB", $1 / 1e6}'))"
