#!/usr/bin/env bash
# LabelGroups.EveryPassSelectsTests: the passes of the Makefile pick their tests by ctest label
# (tests/sources.cmake says which source file or test carries which), and a label nobody carries
# any more would make a pass run nothing, and pass. This fails naming each selection that lists no
# test, and each test that carries no label at all (a label pass can never select it).
#
#   usage: check-label-groups.sh CTEST BUILD_DIR SELECTION...
#   SELECTION: LABEL (ctest -L '^LABEL$') or LABEL!OTHER (-L '^LABEL$' -LE '^OTHER$')
#
# ctest -N writes Testing/Temporary/LastTest.log of the directory it lists; this runs inside a
# ctest run of BUILD_DIR, so it lists BUILD_DIR through a scratch directory of its own.
set -euo pipefail
ctest=${1:?usage: check-label-groups.sh CTEST BUILD_DIR SELECTION...}
build=$(cd "${2:?usage: check-label-groups.sh CTEST BUILD_DIR SELECTION...}" && pwd)
shift 2
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
printf 'subdirs("%s")\n' "$build" >"$scratch/CTestTestfile.cmake"

list() { "$ctest" --test-dir "$scratch" -N "$@"; }
count() { list "$@" | sed -n 's/^Total Tests: //p'; }

rc=0
for selection in "$@"; do
  label=${selection%%!*}
  args=(-L "^$label\$")
  what="the label $label"
  if [ "$selection" != "$label" ]; then
    args+=(-LE "^${selection#*!}\$")
    what="$what without ${selection#*!}"
  fi
  n=$(count "${args[@]}")
  if [ "${n:-0}" -eq 0 ]; then
    echo "check-label-groups: no test carries $what (ctest -N ${args[*]} lists none);" \
      "the pass that selects it would run nothing" >&2
    rc=1
  else
    echo "check-label-groups: $what: $n tests"
  fi
done
# <target>_NOT_BUILT is gtest_discover_tests' stand-in for an executable this tree did not build
# (make test-tsan builds only the executables with tsan tests); not a test of ours, and a run
# without a label (make test) runs and fails it.
unlabelled=$(list -LE . | sed -n 's/^ *Test *#[0-9]*: //p' | grep -v '_NOT_BUILT$' || true)
if [ -n "$unlabelled" ]; then
  echo "check-label-groups: tests without a label, which no label pass selects:" >&2
  echo "$unlabelled" >&2
  rc=1
fi
exit "$rc"
