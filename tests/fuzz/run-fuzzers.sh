#!/usr/bin/env bash
# Runs every libFuzzer executable of a fuzz build (make fuzz) for SECONDS each, FUZZ_JOBS at a time,
# seeded with the checked-in corpus tests/fuzz/corpus/<name>/. New inputs go to
# BUILD_DIR/fuzz-corpus/<name>/ (not checked in); a crash input is saved under
# BUILD_DIR/fuzz-artifacts/ and, once fixed, belongs in tests/fuzz/corpus/<name>/ as a regression
# seed (tests/unit/fuzz_corpus_test.cc replays it in the normal suite).
#   usage: run-fuzzers.sh BUILD_DIR SECONDS [NAME...]
set -euo pipefail
build=$(cd "${1:?usage: run-fuzzers.sh BUILD_DIR SECONDS [NAME...]}" && pwd)
seconds=${2:?usage: run-fuzzers.sh BUILD_DIR SECONDS [NAME...]}
shift 2
here=$(cd "$(dirname "$0")" && pwd)

names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for bin in "$build"/fuzz_*; do
    [ -x "$bin" ] && names+=("${bin##*/fuzz_}")
  done
fi
if [ ${#names[@]} -eq 0 ]; then
  echo "run-fuzzers: no fuzz_* executables in $build" >&2
  exit 1
fi

mkdir -p "$build/fuzz-artifacts"
# FUZZ_JOBS fuzzers at a time (one core each); default 1.
jobs=${FUZZ_JOBS:-1}

# Runs fuzzer $1 for $seconds; prints its one-line verdict (and its finding) and fails on a finding.
run_one() {
  local name=$1 work="$build/fuzz-corpus/$1" log="$build/fuzz-$1.log" rc=0 dict=()
  mkdir -p "$work"
  [ -f "$here/dict/$name.dict" ] && dict=("-dict=$here/dict/$name.dict")
  # stdin is /dev/null: a config naming /dev/stdin as a secret file must not wait for input.
  "$build/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 "${dict[@]}" \
    -artifact_prefix="$build/fuzz-artifacts/$name-" "$work" "$here/corpus/$name" \
    </dev/null >"$log" 2>&1 || rc=$?
  local execs cov
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  if [ "$rc" -ne 0 ]; then
    {
      echo "run-fuzzers: $name FAILED (exit $rc) after ${execs:-?} executions; log $log"
      grep -A40 -m1 -E 'ERROR: |fuzz invariant failed|runtime error' "$log" || tail -40 "$log"
    } >&2
    return 1
  fi
  echo "run-fuzzers: $name: ${execs:-?} executions in ${seconds}s, ${cov:-cov: ?}, no finding"
}

failed=()
pids=()
pid_names=()
# Waits for the oldest running fuzzer and records a finding.
reap() {
  if ! wait "${pids[0]}"; then
    failed+=("${pid_names[0]}")
  fi
  pids=("${pids[@]:1}")
  pid_names=("${pid_names[@]:1}")
}
for name in "${names[@]}"; do
  [ ${#pids[@]} -ge "$jobs" ] && reap
  run_one "$name" &
  pids+=("$!")
  pid_names+=("$name")
done
while [ ${#pids[@]} -gt 0 ]; do
  reap
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "run-fuzzers: findings in: ${failed[*]} (inputs under $build/fuzz-artifacts/)" >&2
  exit 1
fi
