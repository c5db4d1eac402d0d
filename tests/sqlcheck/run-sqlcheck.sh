#!/usr/bin/env bash
# The grammar check of `make test`: every statement text of the MySQL set in every shape the
# store can send, every schema file and room-sim's statements (printed by sql-statements), parsed
# with MySQL Workbench's MySQL 8.0 grammar (check.js). With --expect-failure it feeds the check
# MariaDB-only statements instead (mariadb_only.jsonl), each of which it must refuse.
#   tests/sqlcheck/run-sqlcheck.sh PATH/TO/sql-statements [--expect-failure]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
printer=${1:?usage: run-sqlcheck.sh PATH/TO/sql-statements [--expect-failure]}
if [ ! -d "$here/node_modules/ts-mysql-parser" ]; then
  echo "run-sqlcheck: $here/node_modules is missing: run 'make deps' (npm ci)" >&2
  exit 1
fi
if [ "${2:-}" = "--expect-failure" ]; then
  node "$here/check.js" --expect-failure < "$here/mariadb_only.jsonl"
else
  "$printer" | node "$here/check.js"
fi
