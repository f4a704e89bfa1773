#!/usr/bin/env bash
# scripts/slurm-cluster.sh on a machine that is not as it expects: Slurm's
# usual ports held by other programs, a port pinned by the user that is
# taken, a clone inside a folder closed to other users (as `mktemp -d` makes
# them), which munged's user cannot enter. The cluster starts on free ports
# and runs a job; what cannot start says why. CTest runs
# this before the slurm_cluster fixture starts the suite's own cluster (one
# node name, one cluster at a time).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
script="$root/scripts/slurm-cluster.sh"

mkdir -p "$root/.cache"
work="$(mktemp -d "$root/.cache/slurm-script-test.XXXXXX")"   # mode 0700
listeners=()
cleanup() {
  local d
  for d in "$work"/*/; do "$script" stop "$d" >/dev/null 2>&1 || true; done
  for pid in "${listeners[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

failures=0
check() {  # check DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
listening() { [ -n "$(ss -Hltn "sport = :$1")" ]; }

# Holds TCP PORT on 127.0.0.1 until killed; its pid is left in $held. Not
# run in a subshell, so cleanup knows every holder; no descriptor of ours is
# left open in it, or CTest would wait for it to close.
held=
hold() {
  python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); print("ready", flush=True); time.sleep(600)' "$1" \
    </dev/null >"$work/hold-$1" 2>&1 &
  held="$!"
  listeners+=("$held")
  for _ in $(seq 50); do grep -q ready "$work/hold-$1" 2>/dev/null && break; sleep 0.1; done
}

# Slurm's default ports, held by someone else.
for port in 6817 6818; do listening "$port" || hold "$port"; done

# 1. A pinned port that is taken: refused, naming the port and its holder.
pinned=$((20000 + RANDOM % 10000))
until ! listening "$pinned"; do pinned=$((pinned + 1)); done
hold "$pinned"
holder="$held"
set +e
out="$(HYDRA_SLURMCTLD_PORT=$pinned "$script" start "$work/pinned" 2>&1)"
code=$?
set -e
check "a taken pinned port fails the start" test "$code" -ne 0
check "the failure names the pinned port" grep -q "HYDRA_SLURMCTLD_PORT ($pinned)" <<<"$out"
check "the failure shows who holds it (pid $holder)" grep -q "pid=$holder" <<<"$out"
check "the failure shows the daemons' logs" grep -q "munged.log" <<<"$out"

# 2. A cluster starts on free ports beside the held ones, inside the closed
# folder, and runs a job.
check "the folder is closed to munged's user" bash -c "! runuser -u munge -- test -x '$work'"
out="$("$script" start "$work/c" 2>&1)" || { echo "$out"; echo "FAILED: the cluster did not start"; exit 1; }
conf="$work/c/slurm.conf"
ctld="$(sed -n 's/^SlurmctldPort=//p' "$conf")"
slurmd="$(sed -n 's/^SlurmdPort=//p' "$conf")"
check "slurmctld is not on a held port ($ctld)" test "$ctld" != 6817 -a "$ctld" != 6818 -a "$ctld" != "$pinned"
check "slurmd is not on a held port ($slurmd)" test "$slurmd" != 6817 -a "$slurmd" != 6818 -a "$slurmd" != "$pinned"
check "slurmctld listens on its port" listening "$ctld"
check "every node's address is on loopback" bash -c "! grep -o 'NodeAddr=[^ ]*' '$conf' | grep -v '=127\.'"
(cd "$work" && SLURM_CONF="$conf" sbatch --quiet --output="$work/job.out" --wrap 'echo job ran')
for _ in $(seq 300); do grep -q "job ran" "$work/job.out" 2>/dev/null && break; sleep 0.1; done
check "a job runs and writes its output" grep -q "job ran" "$work/job.out"
"$script" start "$work/c" >/dev/null 2>&1
check "a second start keeps the cluster's ports" grep -q "^SlurmctldPort=$ctld$" "$conf"
check "status answers" "$script" status "$work/c"
run_dir="/run/hydra-slurm-$(printf '%s' "$work/c" | md5sum | cut -c1-12)"
daemons="$(cat "$work/c/slurmctld.pid" "$work/c/slurmd.pid" "$run_dir/munge/munged.pid")"
"$script" stop "$work/c" >/dev/null 2>&1
check "stop stops it" bash -c "! '$script' status '$work/c' 2>/dev/null"
for pid in $daemons; do check "stop ends daemon $pid" bash -c "! kill -0 $pid 2>/dev/null"; done
check "stop removes $run_dir" test ! -e "$run_dir"

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all checks passed"
