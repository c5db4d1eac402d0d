#!/usr/bin/env bash
# Runs every libFuzzer executable of a fuzz build (make fuzz) for SECONDS each, one after the other,
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
failed=()
for name in "${names[@]}"; do
  work="$build/fuzz-corpus/$name"
  log="$build/fuzz-$name.log"
  mkdir -p "$work"
  dict=()
  [ -f "$here/dict/$name.dict" ] && dict=("-dict=$here/dict/$name.dict")
  rc=0
  # stdin is /dev/null: a config naming /dev/stdin as a secret file must not wait for input.
  "$build/fuzz_$name" -max_total_time="$seconds" -print_final_stats=1 -timeout=10 \
    -rss_limit_mb=2048 -max_len=16384 "${dict[@]}" \
    -artifact_prefix="$build/fuzz-artifacts/$name-" "$work" "$here/corpus/$name" \
    </dev/null >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
  if [ "$rc" -ne 0 ]; then
    echo "run-fuzzers: $name FAILED (exit $rc) after ${execs:-?} executions; log $log" >&2
    grep -A40 -m1 -E 'ERROR: |fuzz invariant failed|runtime error' "$log" >&2 || tail -40 "$log" >&2
    failed+=("$name")
  else
    echo "run-fuzzers: $name: ${execs:-?} executions in ${seconds}s, ${cov:-cov: ?}, no finding"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "run-fuzzers: findings in: ${failed[*]} (inputs under $build/fuzz-artifacts/)" >&2
  exit 1
fi
