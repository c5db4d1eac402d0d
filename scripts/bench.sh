#!/usr/bin/env bash
# make bench: the benchmarks on this machine only. Starts a private MariaDB under
# BUILD_DIR/bench-mariadb (unix socket, no TCP), runs BUILD_DIR/outbox-bench against it (fake IM
# servers on 127.0.0.1 inside the benchmark process), and prints a Markdown report: the command
# line, the date, the core count and one table of figures with their ratios. The report is also
# written to BUILD_DIR/bench-results.md. Progress goes to stderr. When benchmark 10 runs and
# valgrind is installed, scripts/callgrind-round.sh adds its instruction counts (rows 10d, 10e).
#
#   scripts/bench.sh BUILD_DIR [--relaxed-db] [outbox-bench options, e.g. --only 1,4 or --quick]
#
# The server runs with production's durability: innodb_flush_log_at_trx_commit=1 and a binary log
# synced at each commit (sync_binlog=1, ROW format), so commit figures carry the fsyncs a managed
# MySQL/MariaDB primary pays. --relaxed-db runs it as the tests do instead (flush 2, no binlog),
# for comparing with figures recorded that way.
#
# The figures are measured side by side in one run on one server; compare the ratios, not the
# absolute numbers, across machines. Nothing here asserts on speed.
set -euo pipefail

invocation="scripts/bench.sh $*"
build=$(cd "${1:-build}" && pwd)
shift || true
durable=1
bench_args=()
for arg in "$@"; do
  if [ "$arg" = --relaxed-db ]; then durable=0; else bench_args+=("$arg"); fi
done
set -- "${bench_args[@]}"
here=$(cd "$(dirname "$0")" && pwd)

for bin in outbox-bench outbox-relay; do
  if [ ! -x "$build/$bin" ]; then
    echo "bench.sh: $build/$bin is missing; build first (make bench, or cmake --build $build --target outbox-bench outbox-relay)" >&2
    exit 2
  fi
done

dbdir="$build/bench-mariadb"
cleanup() { "$here/mariadb-local.sh" stop "$dbdir" || true; }
trap cleanup EXIT

if [ "$durable" = 1 ]; then
  db_args=(--innodb-flush-log-at-trx-commit=1 --log-bin="$dbdir/binlog" --sync-binlog=1
    --binlog-format=ROW)
  db_settings="innodb_flush_log_at_trx_commit=1, binlog on (sync_binlog=1, ROW): production's durability"
else
  db_args=()
  db_settings="innodb_flush_log_at_trx_commit=2, no binlog: --relaxed-db, not production's durability"
fi
# A server left from a run with the other settings is restarted with these.
"$here/mariadb-local.sh" stop "$dbdir" || true
echo "bench.sh: starting a private MariaDB under $dbdir ($db_settings)" >&2
sock=$("$here/mariadb-local.sh" start "$dbdir" "${db_args[@]}")

results="$build/bench-results.md"
report=$(mktemp "$build/bench-report.XXXXXX")
trap 'rm -f "$report"; cleanup' EXIT
bench_cmd=("$build/outbox-bench" --socket "$sock" --relay-binary "$build/outbox-relay"
  --work-dir "$build/bench-work" "$@")
started=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
SECONDS=0
rc=0
"${bench_cmd[@]}" >"$report" || rc=$?

# Benchmark 10 is selected when there is no --only, or --only names it.
selects_10() {
  local only="" arg
  while [ $# -gt 0 ]; do
    arg=$1
    shift
    case "$arg" in
      --only) only="$only,${1:-}"; shift || true ;;
      --only=*) only="$only,${arg#--only=}" ;;
    esac
  done
  [ -z "$only" ] || [[ ",$only," == *,10,* ]]
}
callgrind_report=$(mktemp "$build/bench-callgrind.XXXXXX")
trap 'rm -f "$report" "$callgrind_report"; cleanup' EXIT
if [ "$rc" = 0 ] && selects_10 "$@"; then
  if command -v valgrind >/dev/null 2>&1; then
    "$here/callgrind-round.sh" "$build" "$sock" >"$callgrind_report" || rc=$?
  else
    echo "- 10d, 10e (instructions per row) skipped: valgrind is not installed (make deps)." \
      >"$callgrind_report"
  fi
fi
{
  echo "### Benchmarks"
  echo
  echo "- Command: \`$invocation\` (runs \`${bench_cmd[*]}\`)"
  echo "- Date: $started, took ${SECONDS} s"
  echo "- Machine: nproc=$(nproc), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)," \
    "$(awk '/MemTotal/ {printf "%.1f GiB RAM", $2/1048576}' /proc/meminfo)"
  echo "- MariaDB: $(mariadb --no-defaults --socket="$sock" -uroot -N -e 'SELECT VERSION()')" \
    "(private server from scripts/mariadb-local.sh: $db_settings)"
  echo "- Shared machine: other builds and tests may run at the same time; the rows of one run" \
    "are measured side by side, so compare ratios."
  echo
  cat "$report"
  if [ -s "$callgrind_report" ]; then
    echo
    cat "$callgrind_report"
  fi
} | tee "$results"
echo "bench.sh: report written to $results" >&2
if [ "$rc" != 0 ]; then
  echo "bench.sh: outbox-bench failed (exit $rc); the report holds what ran before" >&2
fi
exit "$rc"
