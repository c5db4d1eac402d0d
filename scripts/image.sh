#!/usr/bin/env bash
# Builds the outbox-relay image (deploy/outbox-relay.Containerfile) and, when a second tag is
# given, the im-stub image from the same build stage, with podman: `make image`.
#
#   scripts/image.sh RELAY_TAG [IM_STUB_TAG]
#
# The base image is made first when missing (base-image.sh). The build's apt gets an archive of
# its own, /var/cache/room-outbox/image-apt (a bind mount, no change to the Containerfile), kept
# between builds and filled with hard links to the host's downloaded packages, so packages this
# machine has downloaded before are not downloaded again (and an image's apt cleaning, such as the
# official image's docker-clean, removes links, never the host's files). The compiler cache is
# the Containerfile's own cache mount. RUN steps use the host's network (no container network
# backend needed). Prints each build's time.
set -euo pipefail
cd "$(dirname "$0")/.."
relay_tag=${1:?usage: image.sh RELAY_TAG [IM_STUB_TAG]}
stub_tag=${2:-}
# shellcheck source=scripts/podman-env.sh
. scripts/podman-env.sh
scripts/base-image.sh
apt_dir=/var/cache/room-outbox/image-apt
mkdir -p "$apt_dir/partial"
find /var/cache/apt/archives -maxdepth 1 -name '*.deb' -exec ln -f -t "$apt_dir" {} + 2>/dev/null || true
build() {
  local target=$1 tag=$2 started=$SECONDS
  podman build --layers --network host --target "$target" -f deploy/outbox-relay.Containerfile \
    -t "$tag" \
    -v "$apt_dir:/var/cache/apt/archives" . >>"${IMAGE_BUILD_LOG:-/dev/stdout}"
  echo "image: built $tag in $((SECONDS - started)) s" \
    "($(podman image inspect --format '{{.Size}}' "$tag" | awk '{printf "%d MB", $1 / 1e6}'))"
}
build outbox-relay "$relay_tag"
if [ -n "$stub_tag" ]; then build im-stub "$stub_tag"; fi
