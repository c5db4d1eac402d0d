#!/usr/bin/env bash
# The exports of libroom_outbox_hook.so are exactly what the public headers declare: every
# function of hook/include/room_outbox/*.h that the headers do not define themselves is a
# defined dynamic symbol (so a program linking the library never meets an undefined symbol), and
# the library exports nothing else (no core, internal, relay or C-ABI helper symbol). The
# declarations come from clang's AST of the headers (public_declarations.jq), the exports from
# `nm -D --defined-only`; both sides are mangled names.
#
#   tests/abi/check-exports.sh BUILD_DIR
#   tests/abi/check-exports.sh --self-test   # the check must refuse a library that exports one
#                                            # undeclared symbol and lacks the declared ones
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
include="$here/../../hook/include"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ "${1:-}" = "--self-test" ]; then
  printf 'unsigned room_outbox_c_version(void) { return 1; }\nint room_outbox_helper(void) { return 0; }\n' \
    >"$scratch/fake.c"
  gcc -shared -fPIC "$scratch/fake.c" -o "$scratch/libroom_outbox_hook.so"
  set +e
  said=$("$0" "$scratch" 2>&1)
  rc=$?
  set -e
  if [ "$rc" -ne 0 ] && [[ "$said" == *"not exported"*room_outbox_hook_commit* ]] &&
    [[ "$said" == *"declared in no public header"*room_outbox_helper* ]]; then
    echo "check-exports: refuses the fake library, naming what it lacks and what it adds"
    exit 0
  fi
  echo "check-exports: the check passed a library it must refuse (exit $rc):" >&2
  echo "$said" >&2
  exit 1
fi
build=$(cd "${1:?usage: check-exports.sh BUILD_DIR | --self-test}" && pwd)
so=$(readlink -f "$build/libroom_outbox_hook.so")

for header in "$include"/room_outbox/*.h; do
  echo "#include \"room_outbox/$(basename "$header")\""
done >"$scratch/public.cc"
clang++ -std=c++20 -I"$include" -fsyntax-only -Xclang -ast-dump=json \
  -Xclang -ast-dump-filter=room_outbox "$scratch/public.cc" >"$scratch/ast.json"
jq -r -f "$here/public_declarations.jq" "$scratch/ast.json" | sort -u >"$scratch/declared"
# The scan must see the API it checks: a C function, a C++ function and a constructor.
for known in room_outbox_hook_commit _ZN11room_outbox10CreateHookERKNS_11HookOptionsEPNS_5ErrorE \
  _ZN11room_outbox11LibraryInitC1Ev; do
  grep -qx "$known" "$scratch/declared" ||
    { echo "check-exports: the header scan missed $known: public_declarations.jq is broken" >&2; exit 1; }
done

# Defined dynamic symbols, without version suffixes or the version node (type A).
nm -D --defined-only "$so" | awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }' | sort -u \
  >"$scratch/exported"
# A constructor or destructor is declared once and emitted as its complete (C1/D1) and base
# (C2/D2) variants; the base variant counts as the declared one.
sed -E 's/C1E/C2E/; s/D1E/D2E/' "$scratch/declared" | cat - "$scratch/declared" | sort -u \
  >"$scratch/allowed"

missing=$(comm -23 "$scratch/declared" "$scratch/exported")
extra=$(comm -13 "$scratch/allowed" "$scratch/exported")
status=0
if [ -n "$missing" ]; then
  echo "check-exports: declared in hook/include/room_outbox but not exported by $(basename "$so")" \
    "(add ROOM_OUTBOX_EXPORT and the symbol to the baseline):" >&2
  c++filt <<<"$missing" | sed 's/^/  /' >&2
  status=1
fi
if [ -n "$extra" ]; then
  echo "check-exports: exported by $(basename "$so") but declared in no public header:" >&2
  c++filt <<<"$extra" | sed 's/^/  /' >&2
  status=1
fi
[ "$status" -eq 0 ] &&
  echo "check-exports: $(wc -l <"$scratch/declared") declarations, each exported; nothing else is"
exit "$status"
