#!/usr/bin/env bash
# Sourced by `make image` and tests/install/check-image.sh: points podman at a containers.conf
# that works on this kind of machine, unless CONTAINERS_CONF is set already.
#   - runc as the OCI runtime, cgroupfs as the cgroup manager: the machine has cgroups v1 and no
#     systemd as PID 1;
#   - the containers' ulimits at most the machine's hard limits: podman's defaults (nofile and
#     nproc of 1048576) exceed them and runc then fails with "error setting rlimit type 7
#     (nofile) / 6 (nproc): operation not permitted". conmon caps nproc at 32768 by itself, so
#     nproc is the least of the hard limit, 32768 and 4096 (a relay needs a few threads).
#   - events written to a file (no journald).
# The file goes into PODMAN_ENV_DIR (default: /var/tmp/room-outbox-podman).
podman_env_dir=${PODMAN_ENV_DIR:-/var/tmp/room-outbox-podman}
if [ -z "${CONTAINERS_CONF:-}" ]; then
  mkdir -p "$podman_env_dir"
  hard_nofile=$(ulimit -Hn)
  hard_nproc=$(ulimit -Hu)
  [ "$hard_nofile" = unlimited ] && hard_nofile=1048576
  [ "$hard_nproc" = unlimited ] && hard_nproc=4096
  nofile=$((hard_nofile < 65536 ? hard_nofile : 65536))
  nproc=$((hard_nproc < 4096 ? hard_nproc : 4096))
  cat >"$podman_env_dir/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=${nofile}:${nofile}", "nproc=${nproc}:${nproc}"]

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
  export CONTAINERS_CONF="$podman_env_dir/containers.conf"
fi
