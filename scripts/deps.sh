#!/usr/bin/env bash
# Installs the Debian 12 packages the build, tests and demo need; skips those already present.
# prometheus: only for promtool (the suite checks /metrics and conf/alerts.yml with it); its
# service is not started by the tests.
set -euo pipefail

packages=(
  cmake g++ make pkg-config
  # the Go package (hook/go) and its tests; abidiff for the ABI check of the shared library, jq
  # for the export check (it reads clang's AST of the public headers)
  golang-go abigail-tools jq
  # the pure-Go package's tests and example (hook/gosql): the MySQL driver, offline
  golang-github-go-sql-driver-mysql-dev
  # the Go package's static link (-tags roomoutbox_static): the static archives of libcurl's own
  # dependencies, and the link names of those Debian 12 ships shared only (Kerberos, SASL,
  # p11-kit)
  libnghttp2-dev librtmp-dev libssh2-1-dev libpsl-dev libzstd-dev libldap-dev libidn2-dev
  libunistring-dev libbrotli-dev libgnutls28-dev libkrb5-dev libsasl2-dev libp11-kit-dev
  mariadb-server mariadb-client libmariadb-dev
  libcurl4-openssl-dev libssl-dev zlib1g-dev
  libtomlplusplus-dev libspdlog-dev libcli11-dev nlohmann-json3-dev libexpected-dev
  libcpp-httplib-dev libsystemd-dev systemd
  libgtest-dev libgmock-dev faketime
  curl procps
  prometheus
  # make bench: callgrind counts the instructions of a relay round (scripts/callgrind-round.sh).
  valgrind
  # make fuzz: clang and libFuzzer of the same (Debian 12: 14) version.
  clang libclang-rt-14-dev libfuzzer-14-dev
  # Man pages: AsciiDoc -> groff at build time; groff checks the rendered pages; man-db for man -w.
  asciidoctor groff-base man-db
  # make deb: the Debian way (dpkg-buildpackage + debhelper), lintian, ccache for a cheap rebuild.
  debhelper dpkg-dev fakeroot lintian ccache
  # the grammar check (tests/sqlcheck) and the TLS test's certificates
  openssl
  # make image / make image-check: podman with runc (this machine has cgroups v1), debootstrap for
  # the Debian 12 base image when no registry can be reached; docker-compose checks compose.yaml
  podman runc debootstrap docker-compose
)
# The grammar check's Node.js: Debian's nodejs and npm, unless a Node.js with its npm is there.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi

# The grammar check's npm packages (tests/sqlcheck/package-lock.json), into that folder.
install_sqlcheck() {
  local dir
  dir="$(cd "$(dirname "$0")/.." && pwd)/tests/sqlcheck"
  if [ -d "$dir/node_modules/ts-mysql-parser" ] && [ "$dir/node_modules" -nt "$dir/package-lock.json" ]; then
    return 0
  fi
  echo "deps: npm ci in $dir"
  (cd "$dir" && npm ci --no-audit --no-fund)
  touch "$dir/node_modules"
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#packages[@]} packages present"
  install_sqlcheck
  exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
echo "deps: installing ${missing[*]}"
"${sudo[@]}" apt-get update
DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
install_sqlcheck
