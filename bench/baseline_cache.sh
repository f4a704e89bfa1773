#!/usr/bin/env bash
# What the baseline cache saves: the demo race scored with a cold cache (the
# base commit's build, tests and lint run first) against a warm one (they are
# read from .hydra/cache). Reports the median scoring time of each, taken from
# the race records (scoringStarted -> raceFinished in events.jsonl).
#
#   bench/baseline_cache.sh [RUNS]      (default 5; needs build/server/hydra)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
hydra="$root/build/server/hydra"
runs="${1:-5}"
work="$(mktemp -d /tmp/hydra-baseline-bench.XXXXXX)"
trap 'rm -rf "$work"' EXIT

cp -R "$root/examples/demo/project/." "$work/"
cd "$work"
git init -q && git add -A && git -c user.name=bench -c user.email=bench@localhost commit -qm demo

scoring_ms() {  # the newest race's scoring time, in ms
  local race
  race="$(ls -1 .hydra/races | sort | tail -n 1)"
  /usr/bin/python3 - ".hydra/races/$race/events.jsonl" <<'PY'
import json, sys
from datetime import datetime
times = {}
for line in open(sys.argv[1]):
    e = json.loads(line)
    times.setdefault(e["type"], datetime.fromisoformat(e["time"].replace("Z", "+00:00")))
print(int((times["raceFinished"] - times["scoringStarted"]).total_seconds() * 1000))
PY
}

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

cold=() warm=()
for _ in $(seq "$runs"); do
  rm -rf .hydra/cache
  "$hydra" race "Fix the open issue in README.md" --agents careful,breaker,sprawler >/dev/null
  cold+=("$(scoring_ms)")
  "$hydra" race "Fix the open issue in README.md" --agents careful,breaker,sprawler >/dev/null
  warm+=("$(scoring_ms)")
  "$hydra" cleanup >/dev/null
done
echo "scoring, cold cache (ms): ${cold[*]}  median $(printf '%s\n' "${cold[@]}" | median)"
echo "scoring, warm cache (ms): ${warm[*]}  median $(printf '%s\n' "${warm[@]}" | median)"
