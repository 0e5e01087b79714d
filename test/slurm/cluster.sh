#!/usr/bin/env bash
# A one-node Slurm cluster for the tests of the slurm executor (test/slurm/), from Debian's packages:
#
#   bash test/slurm/cluster.sh up      install what is missing (root + apt-get), write the configuration,
#                                      start munged, slurmctld and slurmd, wait until the node is idle;
#                                      prints `SLURM_CONF=<dir>/slurm.conf` and, on its last line, `started`
#                                      or `reused` (a cluster of this directory already answered)
#   bash test/slurm/cluster.sh down    cancel every job, end the daemons by their pid files, munged last
#                                      (only a munged this script started), remove the directory
#   bash test/slurm/cluster.sh check   exit 0 when the cluster answers and its node is idle or mixed
#
# Everything lives in SLURM_TEST_DIR (default /tmp/subagents-slurm): slurm.conf, cgroup.conf, state,
# spool, logs, pid files. Its ports (SLURM_TEST_PORT, default 16817, and the next one for slurmd) are
# not Slurm's defaults, so a real cluster's daemons on this machine are not disturbed. The node claims
# SLURM_TEST_CPUS CPUs (default 8, beyond the real count: SlurmdParameters=config_overrides), so that
# several jobs run at once on a small machine. The measured behaviour and traps: ../shared/SLURM.md.
#
# Exit status: 0 done; 2 cannot (no root, no apt-get, a daemon that would not start): the reason on stderr.
set -uo pipefail
me=test/slurm/cluster.sh
dir="${SLURM_TEST_DIR:-/tmp/subagents-slurm}"
port="${SLURM_TEST_PORT:-16817}"
cpus="${SLURM_TEST_CPUS:-8}"
conf="$dir/slurm.conf"
export SLURM_CONF="$conf"

fail() { echo "$me: $*" >&2; exit 2; }

# Bounded: a client call against a controller that does not answer must not hang the tests.
answers() { timeout 5 scontrol ping 2>/dev/null | grep -q 'is UP'; }
node_ready() { timeout 5 sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; }

install() {
  local want=()
  command -v slurmctld >/dev/null 2>&1 || want+=(slurmctld)
  command -v slurmd >/dev/null 2>&1 || want+=(slurmd)
  command -v sbatch >/dev/null 2>&1 || want+=(slurm-client)
  command -v munged >/dev/null 2>&1 || want+=(munge)
  [ "${#want[@]}" -eq 0 ] && return 0
  [ "$(id -u)" = 0 ] || fail "Slurm is not installed (${want[*]} missing) and installing it needs root"
  command -v apt-get >/dev/null 2>&1 || fail "Slurm is not installed (${want[*]} missing) and there is no apt-get to install it"
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null 2>&1 || fail "apt-get could not install ${want[*]}"
  fi
}

write_conf() {
  local host proctrack
  host="$(hostname -s)"
  # proctrack/cgroup ends every process of a job (a double-forked one too); it needs the cgroup v1
  # freezer. Without it, linuxproc (a setsid grandchild may then outlive its job).
  proctrack=proctrack/linuxproc
  [ -d /sys/fs/cgroup/freezer ] && proctrack=proctrack/cgroup
  mkdir -p "$dir/state" "$dir/spool" "$dir/log"
  chown slurm:slurm "$dir/state" "$dir/log"
  cat >"$conf" <<CONF
ClusterName=subagents-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=$proctrack
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/log/jobcomp.log
MpiDefault=none
MailProg=/bin/true
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MinJobAge=300
KillWait=3
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  cat >"$dir/cgroup.conf" <<CONF
CgroupPlugin=cgroup/v1
ConstrainCores=no
ConstrainRAMSpace=no
ConstrainSwapSpace=no
ConstrainDevices=no
CONF
}

start_munge() {
  if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then return 0; fi
  [ -s /etc/munge/munge.key ] || { mungekey --create >/dev/null 2>&1 && chown munge:munge /etc/munge/munge.key; }
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 0755 /run/munge
  su -s /bin/sh munge -c 'munged' >/dev/null 2>&1 || runuser -u munge -- munged >/dev/null 2>&1 || fail "munged would not start"
  local i
  for i in $(seq 1 50); do
    if munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
      touch "$dir/munged.ours"
      return 0
    fi
    sleep 0.1
  done
  fail "munged started but munge -n | unmunge fails"
}

pid_of() { [ -s "$1" ] && cat "$1"; }

wait_gone() {
  local pid="$1" i
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
}

up() {
  if [ -f "$conf" ] && answers && node_ready; then
    echo "SLURM_CONF=$conf"
    echo reused
    return 0
  fi
  [ "$(id -u)" = 0 ] || fail "a test cluster needs root (slurmd runs jobs as their submitters)"
  install
  mkdir -p "$dir" && chmod 0755 "$dir"
  write_conf
  start_munge
  slurmctld -f "$conf" >>"$dir/log/start.log" 2>&1 || fail "slurmctld would not start: $(tail -n 3 "$dir/log/slurmctld.log" 2>/dev/null)"
  slurmd -f "$conf" >>"$dir/log/start.log" 2>&1 || fail "slurmd would not start: $(tail -n 3 "$dir/log/slurmd.log" 2>/dev/null)"
  local i
  for i in $(seq 1 300); do
    if answers && node_ready; then
      echo "SLURM_CONF=$conf"
      echo started
      return 0
    fi
    sleep 0.1
  done
  fail "the node did not become idle within 30 s: $(timeout 5 sinfo -N 2>&1 | tail -n 2)"
}

down() {
  [ -f "$conf" ] || return 0
  # Jobs first: their processes and slurmstepd outlive the daemons.
  if answers; then
    timeout 10 scancel --full --user="$(id -un)" >/dev/null 2>&1 || true
    local i
    for i in $(seq 1 100); do
      [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  local pid
  for f in slurmd.pid slurmctld.pid; do
    pid="$(pid_of "$dir/$f")" || continue
    kill -TERM "$pid" 2>/dev/null && wait_gone "$pid"
  done
  if [ -f "$dir/munged.ours" ]; then
    pid="$(pid_of /run/munge/munged.pid)" && kill -TERM "$pid" 2>/dev/null && wait_gone "$pid"
  fi
  rm -rf "$dir"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  check) [ -f "$conf" ] && answers && node_ready ;;
  *) echo "usage: $me up|down|check" >&2; exit 2 ;;
esac
