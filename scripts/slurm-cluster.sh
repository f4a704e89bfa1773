#!/usr/bin/env bash
# A private one-node Slurm cluster on this machine, for the Slurm executor's
# tests and benchmarks: Debian's slurm-wlm and munge, started without systemd
# and without cgroups, its files under one directory (DIR) but for munge's
# and the spool, which live under /run (see below).
#
#   scripts/slurm-cluster.sh start [DIR]   start it (idempotent); prints SLURM_CONF=...
#   scripts/slurm-cluster.sh stop [DIR]    cancel its jobs, stop its daemons
#   scripts/slurm-cluster.sh status [DIR]  exit 0 when it answers
#
# DIR defaults to .cache/slurm in the repository. Ports: a new cluster takes
# two TCP ports that nothing listens on (HYDRA_SLURMCTLD_PORT and
# HYDRA_SLURMD_PORT pin them) and writes them into DIR/slurm.conf, where
# stop, status, sbatch and hydra read them. Needs root (slurmd runs jobs as
# their users) and the packages `scripts/install-deps.sh test` installs.
# Only the daemons whose pid files are this cluster's are ever signalled. When the
# cluster does not come up, the reason is printed: the tail of each daemon's
# log and who holds its ports.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
action="${1:-}"
dir="${2:-$root/.cache/slurm}"

say() { echo "slurm-cluster: $*" >&2; }
die() { say "$*"; exit 1; }

case "$action" in start|stop|status) ;; *) die "usage: $0 start|stop|status [DIR]" ;; esac
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

# munged runs as the user munge, which must reach its key, socket and log: a
# clone inside a folder closed to other users (as `mktemp -d` makes them) would
# shut it out. Unix sockets also have a 108-byte path limit that a deep clone
# passes (munged's, and slurmstepd's in SlurmdSpoolDir). So munge's files and
# the spool live in a short directory of their own under /run, named after DIR.
run_dir="/run/hydra-slurm-$(printf '%s' "$dir" | md5sum | cut -c1-12)"
munge_dir="$run_dir/munge"
socket="$munge_dir/munge.socket"
spool="$run_dir/spool"

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

# The value of KEY in slurm.conf.
conf_value() { [ -f "$conf" ] && sed -n "s/^$1=\([^ ]*\).*/\1/p" "$conf" | head -1; }

# Whether anything listens on TCP PORT, on any address.
listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }

# Everything that may say why the cluster is not up: the end of each log,
# who listens on the cluster's ports, and which daemons run.
explain() {
  local log
  for log in "$dir/log/slurmctld.log" "$dir/log/slurmd.log" "$munge_dir/munged.log"; do
    if [ -s "$log" ]; then
      echo "--- last lines of $log" >&2
      tail -n 25 "$log" >&2
    else
      echo "--- $log: empty or missing" >&2
    fi
  done
  local port
  for port in "${ctld_port:-$(conf_value SlurmctldPort)}" "${slurmd_port:-$(conf_value SlurmdPort)}"; do
    [ -n "$port" ] || continue
    echo "--- TCP port $port:" >&2
    ss -Hltnp "sport = :$port" >&2 2>/dev/null || true
    listening "$port" || echo "(nothing listens on it)" >&2
  done
  echo "--- slurm and munge processes on this machine:" >&2
  ps -eo pid,user,etime,args | grep -E '[s]lurmctld|[s]lurmd|[s]lurmstepd|[m]unged' >&2 || echo "(none)" >&2
}
fail() { say "$*"; explain; exit 1; }

if [ "$action" = status ]; then
  answers && { echo "SLURM_CONF=$conf"; exit 0; }
  die "not running (no controller answers for $conf)"
fi

stop_pid() {
  local file="$1" pid
  running "$file" || { rm -f "$file"; return 0; }
  pid="$(cat "$file")"
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
  rm -f "$file"
}

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
  rm -rf "$run_dir"
  say "stopped ($dir)"
  exit 0
fi

# --- start -------------------------------------------------------------------
[ "$(id -u)" = 0 ] || die "must run as root: slurmd starts jobs as their users"
for tool in slurmctld slurmd munged mungekey munge unmunge sbatch squeue scontrol scancel sinfo ss; do
  command -v "$tool" >/dev/null || die "$tool is missing: run scripts/install-deps.sh test (Debian's slurm-wlm, munge and iproute2)"
done
id munge >/dev/null 2>&1 || die "there is no user 'munge': reinstall Debian's munge package (scripts/install-deps.sh test)"

mkdir -p "$dir/log" "$dir/state" "$munge_dir" "$spool"
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

# A TCP port below the kernel's ephemeral range that nothing listens on and
# that is none of the ports given as arguments.
free_port() {
  local port taken
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % 12000))
    for taken in "$@"; do [ "$port" = "$taken" ] && continue 2; done
    listening "$port" || { echo "$port"; return 0; }
  done
  die "found no free TCP port between 20000 and 32000"
}

write_conf() {
  local ctld_port="$1" slurmd_port="$2" elsewhere_port="$3"
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
SlurmdSpoolDir=$spool
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
# A node named as another machine that never comes up, for hydra's check that
# the nodes can see the worktrees: its address is on this machine's loopback,
# on a port nothing listens on, so the controller's pings go nowhere else.
NodeName=hydra-elsewhere NodeAddr=127.0.0.2 Port=$elsewhere_port CPUs=1 RealMemory=100 State=DOWN Reason="not a real machine"
PartitionName=elsewhere Nodes=hydra-elsewhere Default=NO MaxTime=INFINITE State=UP
CONF
  mv "$conf.new" "$conf"
}

if ! (running "$munge_dir/munged.pid" && munge -n -S "$socket" 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1); then
  stop_pid "$munge_dir/munged.pid"
  rm -f "$socket" "$socket.lock"
  runuser -u munge -- munged --socket="$socket" --key-file="$munge_dir/munge.key" \
    --pid-file="$munge_dir/munged.pid" --log-file="$munge_dir/munged.log" --seed-file="$munge_dir/munged.seed" \
    || fail "munged did not start"
  wait_for 10 sh -c "munge -n -S '$socket' | unmunge -S '$socket'" || fail "munged does not answer on $socket"
fi

if running "$dir/slurmctld.pid" && [ -n "$(conf_value SlurmctldPort)" ]; then
  # A cluster of this DIR is up: keep its ports, take the rest of the
  # configuration anew.
  ctld_port="$(conf_value SlurmctldPort)"
  slurmd_port="$(conf_value SlurmdPort)"
  elsewhere_port="$(sed -n 's/^NodeName=hydra-elsewhere .*Port=\([0-9]*\).*/\1/p' "$conf")"
  write_conf "$ctld_port" "$slurmd_port" "${elsewhere_port:-$(free_port "$ctld_port" "$slurmd_port")}"
  scontrol reconfigure >/dev/null 2>&1 || true
  wait_for 20 answers || fail "slurmctld does not answer"
else
  # A port found free can be taken before slurmctld binds it: then the
  # controller is started again on other ports.
  started=
  for attempt in 1 2 3; do
    ctld_port="${HYDRA_SLURMCTLD_PORT:-$(free_port)}"
    slurmd_port="${HYDRA_SLURMD_PORT:-$(free_port "$ctld_port")}"
    elsewhere_port="$(free_port "$ctld_port" "$slurmd_port")"
    if listening "$ctld_port" || listening "$slurmd_port"; then
      [ -n "${HYDRA_SLURMCTLD_PORT:-}${HYDRA_SLURMD_PORT:-}" ] \
        && fail "a port pinned by HYDRA_SLURMCTLD_PORT ($ctld_port) or HYDRA_SLURMD_PORT ($slurmd_port) is taken"
      continue
    fi
    write_conf "$ctld_port" "$slurmd_port" "$elsewhere_port"
    say "starting slurmctld on port $ctld_port (attempt $attempt)"
    if slurmctld -f "$conf" && wait_for 20 answers; then started=1; break; fi
    say "slurmctld did not come up on port $ctld_port:"
    explain
    stop_pid "$dir/slurmctld.pid"
    [ -n "${HYDRA_SLURMCTLD_PORT:-}" ] && break
  done
  [ -n "$started" ] || fail "slurmctld did not start"
fi

if ! running "$dir/slurmd.pid"; then
  slurmd_port="$(conf_value SlurmdPort)"
  listening "$slurmd_port" && fail "port $slurmd_port, this cluster's SlurmdPort, is taken"
  slurmd -f "$conf" || fail "slurmd did not start"
fi

node_ready() {
  case "$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null)" in
    idle|mixed|allocated|completing) return 0 ;;
    drain*|down*) scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true; return 1 ;;
    *) return 1 ;;
  esac
}
wait_for 60 node_ready || fail "node $host is '$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null)' after 60 s"
say "node $host is up ($conf)"
echo "SLURM_CONF=$conf"
