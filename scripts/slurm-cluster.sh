#!/usr/bin/env bash
# A private one-node Slurm cluster on this machine, for the Slurm executor's
# tests and benchmarks: Debian's slurm-wlm and munge, started without systemd
# and without cgroups, with every file under one directory.
#
#   scripts/slurm-cluster.sh start [DIR]   start it (idempotent); prints SLURM_CONF=...
#   scripts/slurm-cluster.sh stop [DIR]    cancel its jobs, stop its daemons
#   scripts/slurm-cluster.sh status [DIR]  exit 0 when it answers
#
# DIR defaults to .cache/slurm in the repository. Ports: HYDRA_SLURMCTLD_PORT
# (default 6817) and HYDRA_SLURMD_PORT (6818). Needs root (slurmd runs jobs as
# their users) and the packages `scripts/install-deps.sh test` installs.
# Only the daemons whose pid files are in DIR are ever signalled.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
action="${1:-}"
dir="${2:-$root/.cache/slurm}"
ctld_port="${HYDRA_SLURMCTLD_PORT:-6817}"
slurmd_port="${HYDRA_SLURMD_PORT:-6818}"

say() { echo "slurm-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

case "$action" in start|stop|status) ;; *) die "usage: $0 start|stop|status [DIR]" ;; esac
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
conf="$dir/slurm.conf"
munge_dir="$dir/munge"
socket="$munge_dir/munge.socket"
export SLURM_CONF="$conf"

# The pid in FILE when that process still runs.
running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
answers() { [ -f "$conf" ] && timeout 10 scontrol ping 2>/dev/null | grep -q "is UP"; }
# Waits until COMMAND succeeds, up to SECONDS.
wait_for() {
  local seconds="$1"; shift
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -ge "$deadline" ] && return 1
    sleep 0.1
  done
}

stop_pid() {
  local file="$1" pid
  running "$file" || { rm -f "$file"; return 0; }
  pid="$(cat "$file")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

if [ "$action" = status ]; then
  answers && { echo "SLURM_CONF=$conf"; exit 0; }
  die "not running (no controller answers for $conf)"
fi

if [ "$action" = stop ]; then
  if answers; then
    jobs="$(squeue --noheader --format=%A 2>/dev/null | tr '\n' ' ')"
    if [ -n "${jobs// /}" ]; then
      say "cancelling jobs: $jobs"
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      wait_for 20 test -z "$(squeue --noheader --format=%A 2>/dev/null)" || say "jobs still listed: $(squeue --noheader --format=%A | tr '\n' ' ')"
    fi
  fi
  stop_pid "$dir/slurmd.pid"
  stop_pid "$dir/slurmctld.pid"
  stop_pid "$munge_dir/munged.pid"
  say "stopped ($dir)"
  exit 0
fi

# --- start -------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "must run as root: slurmd starts jobs as their users"
for tool in slurmctld slurmd munged mungekey sbatch squeue scontrol scancel sinfo; do
  command -v "$tool" >/dev/null || die "$tool is missing: run scripts/install-deps.sh test (Debian's slurm-wlm and munge)"
done

mkdir -p "$dir/log" "$dir/spool" "$dir/state" "$munge_dir"
# munged refuses a socket directory that is not its own, or not searchable by all.
chown munge:munge "$munge_dir"
chmod 0711 "$munge_dir"
if [ ! -s "$munge_dir/munge.key" ]; then
  mungekey --create --keyfile="$munge_dir/munge.key"
  chown munge:munge "$munge_dir/munge.key"
  chmod 0600 "$munge_dir/munge.key"
fi

host="$(hostname -s)"
# What slurmd detects, a little less memory than it sees: a node reporting
# less than its configured RealMemory is drained.
hardware="$(slurmd -C | head -1)"
memory="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$hardware")"
memory=$((memory * 9 / 10))
cpus="$(grep -o 'CPUs=[0-9]* Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*' <<<"$hardware")"

cat >"$conf.new" <<CONF
# A one-node cluster for hydra's tests (scripts/slurm-cluster.sh).
ClusterName=hydra-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
# Finished jobs stay visible to squeue and scontrol for an hour.
MinJobAge=3600
# Jobs are scheduled as they are submitted, not up to 3 s later.
SchedulerParameters=batch_sched_delay=0
KillWait=10
NodeName=$host NodeAddr=127.0.0.1 NodeHostname=$host $cpus RealMemory=$memory State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
# A node of another machine that never comes up (its address is TEST-NET-1):
# hydra's check that the nodes can see the worktrees has something to refuse.
NodeName=hydra-elsewhere NodeAddr=192.0.2.1 CPUs=1 RealMemory=100 State=DOWN Reason="not a real machine"
PartitionName=elsewhere Nodes=hydra-elsewhere Default=NO MaxTime=INFINITE State=UP
CONF
mv "$conf.new" "$conf"

if ! (running "$munge_dir/munged.pid" && munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1); then
  rm -f "$socket" "$socket.lock" "$munge_dir/munged.pid"
  runuser -u munge -- munged --socket="$socket" --key-file="$munge_dir/munge.key" \
    --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" \
    || die "munged did not start: see $munge_dir/munged.log"
  wait_for 10 sh -c "munge -n -S '$socket' | unmunge -S '$socket'" || die "munged does not answer: see $munge_dir/munged.log"
fi

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
if running "$dir/slurmctld.pid"; then
  scontrol reconfigure >/dev/null 2>&1 || true
else
  port_taken "$ctld_port" && die "port $ctld_port is taken (another slurmctld?): set HYDRA_SLURMCTLD_PORT"
  slurmctld -f "$conf" || die "slurmctld did not start: see $dir/log/slurmctld.log"
fi
wait_for 20 answers || die "slurmctld does not answer: see $dir/log/slurmctld.log"

if ! running "$dir/slurmd.pid"; then
  port_taken "$slurmd_port" && die "port $slurmd_port is taken (another slurmd?): set HYDRA_SLURMD_PORT"
  slurmd -f "$conf" || die "slurmd did not start: see $dir/log/slurmd.log"
fi

node_ready() {
  case "$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null)" in
    idle|mixed|allocated|completing) return 0 ;;
    drain*|down*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true; return 1 ;;
    *) return 1 ;;
  esac
}
wait_for 60 node_ready || die "node $host is '$(sinfo --noheader --nodes="$host" --format=%T)': see $dir/log/slurmd.log"
say "node $host is up ($conf)"
echo "SLURM_CONF=$conf"
