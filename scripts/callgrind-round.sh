#!/usr/bin/env bash
# Benchmark 10, instructions per row: runs `outbox-bench --callgrind-round ROWS` under
# valgrind's callgrind twice, collecting once the first worker round of the process (cold: it
# also prepares the statements, opens the IM connections and signs the UserSig) and once the
# second (warm), and prints two report rows in Markdown: instructions (Ir) per published row.
# Only the round's own thread inside OutboxWorker::RunRound is counted (--toggle-collect is per
# thread): the fake IM server's threads and the MariaDB server, another process, are not.
# Instruction counts do not depend on how busy the machine is, unlike times.
#
#   scripts/callgrind-round.sh BUILD_DIR SOCKET [ROWS]   (ROWS per round, default 100)
#
# Called by scripts/bench.sh when valgrind is installed; needs a running MariaDB at SOCKET.
set -euo pipefail

build=$(cd "${1:?usage: callgrind-round.sh BUILD_DIR SOCKET [ROWS]}" && pwd)
sock=${2:?usage: callgrind-round.sh BUILD_DIR SOCKET [ROWS]}
rows=${3:-100}
if ! command -v valgrind >/dev/null 2>&1; then
  echo "callgrind-round.sh: valgrind is not installed (make deps installs it)" >&2
  exit 2
fi
work="$build/bench-work/callgrind"
mkdir -p "$work"

# Runs one valgrind pass collecting only FUNCTION; prints its Ir total.
count_round() {
  local name=$1 function=$2
  local out="$work/callgrind.$name.out" log="$work/callgrind.$name.log"
  rm -f "$out"
  echo "callgrind-round.sh: $name round of $rows rows under callgrind ..." >&2
  if ! valgrind --tool=callgrind --collect-atstart=no "--toggle-collect=$function" \
    --callgrind-out-file="$out" "$build/outbox-bench" --socket "$sock" \
    --work-dir "$build/bench-work" --callgrind-round "$rows" >"$log" 2>&1; then
    echo "callgrind-round.sh: the $name run failed; its output ($log):" >&2
    cat "$log" >&2
    return 1
  fi
  grep -q "round=$name claimed=$rows published=$rows " "$log" || {
    echo "callgrind-round.sh: the $name round did not publish $rows rows ($log)" >&2
    return 1
  }
  sed -n 's/^summary: //p' "$out"
}

# 1234567 -> 1,234,567
group() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }
per_row() { group "$(( ($1 + rows / 2) / rows ))"; }

# Inclusive Ir per row of the parts of a round, from callgrind_annotate: "label pattern" pairs;
# a part's figure is the largest inclusive count among the functions matching its pattern.
parts() {
  local out=$1 annotated
  if ! annotated=$(callgrind_annotate --inclusive=yes --threshold=100 "$out" 2>/dev/null); then
    echo "not available (callgrind_annotate failed on $out)"
    return 0
  fi
  local line=""
  while IFS='|' read -r label pattern; do
    local ir
    ir=$(echo "$annotated" | grep -F -- "$pattern" | awk '{ gsub(",", "", $1); v = $1 + 0; if (v > m) m = v } END { print m + 0 }')
    line="$line${line:+, }$label $(per_row "$ir")"
  done <<'PARTS'
publish (TencentImPublisher::PublishStream)|TencentImPublisher::PublishStream(
of which libcurl (curl_multi_perform)|:curl_multi_perform 
of which request bodies (WriteSendGroupMsgBody)|WriteSendGroupMsgBody
decode and per-room queues (RoomQueues::Load)|RoomQueues::Load(
claim (MariaDbRelayStore::ClaimDue)|MariaDbRelayStore::ClaimDue(
marks (ResultWriter::Flush)|ResultWriter::Flush()
PARTS
  echo "$line"
}

cold=$(count_round cold '*CallgrindColdRound*')
warm=$(count_round warm '*CallgrindWarmRound*')
settings="worker defaults (max_in_flight=16, per_room, room_min_interval=25ms), budget off, publish_timeout=30s and lease=120s (valgrind is slow); $rows rows over 100,000 room ids (nearly always one row per room), instant stub in the same process"
ratio=$(awk -v c="$cold" -v w="$warm" 'BEGIN { printf "x%.2f vs 10d", w / c }')
echo "### 10d, 10e: instructions per row (scripts/callgrind-round.sh, valgrind $(valgrind --version | sed 's/^valgrind-//'))"
echo
echo "| # | Measured | Settings | Result | Ratio |"
echo "|---|---|---|---|---|"
echo "| 10d | Instructions per row, one worker round (OutboxWorker::RunRound) of $rows rows, the process's first (cold) | $settings | $(per_row "$cold") Ir per row ($(group "$cold") Ir in all) | x1 |"
echo "| 10e | same, the process's second round (warm: statements prepared, IM connections open, UserSig signed) | $settings | $(per_row "$warm") Ir per row ($(group "$warm") Ir in all) | $ratio |"
echo
echo "- 10d/10e count the instructions of the round's own thread in outbox-bench (the worker as outbox-relay wires it); the MariaDB server (another process) and the stub's threads are not counted."
echo "- 10e, Ir per row by part (inclusive): $(parts "$work/callgrind.warm.out")."
