#!/usr/bin/env bash
# Runs a test command against a sanitizer build (make test-sanitize, make test-tsan) so that every
# sanitizer report is caught, also those of child processes the tests start (outbox-relay,
# room-sim, im-stub), whose exit codes a test may not look at: each report goes to a file under
# BUILD_DIR/sanitizer-logs/, and any file there fails the run and is printed.
#   usage: run-sanitized-tests.sh BUILD_DIR COMMAND [ARGS...]
set -euo pipefail
build=${1:?usage: run-sanitized-tests.sh BUILD_DIR COMMAND [ARGS...]}
shift
src=$(cd "$(dirname "$0")/.." && pwd)
logs="$(cd "$build" && pwd)/sanitizer-logs"
rm -rf "$logs"
mkdir -p "$logs"

common="halt_on_error=1:log_exe_name=1"
# GCC's UBSan runtime ignores log_path next to ASan: its reports go to stderr, and abort_on_error
# makes a finding in a child process a crash (SIGABRT) that no exit-code check can mistake.
# verify_asan_link_order=0: tests that start a child with LD_PRELOAD=libfaketime.so put that
# library before the ASan runtime, which ASan refuses by default; libfaketime replaces only clock
# functions, none that ASan intercepts, so the child runs fully checked.
export ASAN_OPTIONS="$common:log_path=$logs/asan:detect_leaks=1:strict_init_order=1:check_initialization_order=1:verify_asan_link_order=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="$common:log_path=$logs/ubsan:print_stacktrace=1:abort_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export TSAN_OPTIONS="$common:log_path=$logs/tsan:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}"
# Suppression files exist only when a third-party finding is unavoidable; each entry says why.
for kind in tsan ubsan; do
  if [ -f "$src/tests/$kind.supp" ]; then
    var="${kind^^}_OPTIONS"
    export "$var=${!var}:suppressions=$src/tests/$kind.supp"
  fi
done

rc=0
"$@" || rc=$?
if compgen -G "$logs/*" >/dev/null; then
  echo "run-sanitized-tests: sanitizer reports in $logs:" >&2
  for f in "$logs"/*; do
    echo "==== $f" >&2
    cat "$f" >&2
  done
  exit 1
fi
exit "$rc"
