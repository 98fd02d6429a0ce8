#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, from Debian's packages (slurm-wlm, munge; installed by
# scripts/setup.sh), for `minrnn sweep --backend slurm` and its tests. No systemd, nothing in /etc:
# the config, state, spool, logs, munge key and socket all live in DIR, ports are picked free, so
# several clusters (two checkouts' test runs) can run side by side.
#
#   scripts/slurm-local.sh start [DIR]   # prints the line to export: SLURM_CONF=DIR/slurm.conf
#   scripts/slurm-local.sh stop [DIR]    # stops the daemons it started there, by their pids
#   scripts/slurm-local.sh status [DIR]
#
# DIR defaults to $MINRNN_SLURM_DIR, else ${TMPDIR:-/tmp}/minrnn-slurm. Needs root (slurmd runs jobs
# as their user, munged runs as the munge user). Exit status 77 means "cannot start here" (not root,
# packages missing), with the reason on stderr; tests skip on it.
set -euo pipefail

cmd="${1:-}"
DIR="${2:-${MINRNN_SLURM_DIR:-${TMPDIR:-/tmp}/minrnn-slurm}}"
CONF="$DIR/slurm.conf"
export SLURM_CONF="$CONF"

say() { printf '[slurm-local] %s\n' "$*" >&2; }
cannot() { say "cannot start Slurm here: $*"; exit 77; }

pid_of() { [ -s "$DIR/$1.pid" ] && cat "$DIR/$1.pid" || true; }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null; }

stop() {
  local name pid stopped=0
  [ -d "$DIR" ] || { say "no cluster in $DIR"; return 0; }
  # Jobs first (every job of this private cluster is ours): their processes get SIGTERM, and
  # minrnn checkpoints; job steps would otherwise outlive slurmd.
  if alive "$(pid_of slurmctld)"; then
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "${jobs// /}" ]; then
      # shellcheck disable=SC2086
      scancel $jobs 2>/dev/null || true
      for _ in $(seq 1 100); do [ -z "$(squeue -h 2>/dev/null)" ] && break; sleep 0.1; done
    fi
  fi
  # slurmd before slurmctld before munged: each needs the next while it shuts down.
  for name in slurmd slurmctld munged; do
    pid=$(pid_of "$name")
    if alive "$pid"; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do alive "$pid" || break; sleep 0.1; done
      alive "$pid" && { say "$name (pid $pid) ignored SIGTERM for 10 s: SIGKILL"; kill -KILL "$pid" 2>/dev/null || true; }
      stopped=$((stopped + 1))
    fi
    rm -f "$DIR/$name.pid"
  done
  say "stopped $stopped daemon(s) of $DIR"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  [ "$(id -u)" -eq 0 ] || cannot "needs root (slurmd and munged drop to their users themselves)"
  local missing=() b
  for b in munged slurmctld slurmd sbatch squeue scontrol sinfo python3; do
    command -v "$b" >/dev/null || missing+=("$b")
  done
  [ ${#missing[@]} -eq 0 ] || cannot "missing ${missing[*]} (Debian packages slurm-wlm and munge; scripts/setup.sh installs them)"
  id munge >/dev/null 2>&1 || cannot "no munge user (Debian package munge)"
  if alive "$(pid_of slurmctld)" || alive "$(pid_of slurmd)" || alive "$(pid_of munged)"; then
    say "a cluster of $DIR is running already; stopping it first"
    stop
  fi

  local host cpus mem_mb ctld_port slurmd_port
  host=$(hostname -s)
  cpus=$(nproc)
  mem_mb=$(awk '/^MemTotal:/ { printf "%d", $2 / 1024 * 0.9 }' /proc/meminfo)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done

  mkdir -p "$DIR"/{state,spool,log,munge}
  chmod 755 "$DIR"
  # munged checks that its key, socket dir and log are its own and private.
  chown munge:munge "$DIR/munge"
  chmod 700 "$DIR/munge"
  if [ ! -s "$DIR/munge/munge.key" ]; then
    dd if=/dev/urandom of="$DIR/munge/munge.key" bs=1024 count=1 status=none
  fi
  chown munge:munge "$DIR/munge/munge.key"
  chmod 400 "$DIR/munge/munge.key"
  # The socket's dir must be reachable by every user whose jobs authenticate.
  mkdir -p "$DIR/munge-socket"
  chown munge:munge "$DIR/munge-socket"
  chmod 755 "$DIR/munge-socket"

  cat >"$CONF" <<EOF
# Written by scripts/slurm-local.sh: one node, no cgroups, no accounting database.
ClusterName=minrnn-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/munge-socket/munge.socket
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
ReturnToService=2
SlurmdParameters=config_overrides
KillWait=30
MinJobAge=300
MaxArraySize=10001
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

  # The daemons' own stdout/stderr go to files, never to whoever started this script (a pipe
  # held open by a daemon would keep its reader waiting forever).
  runuser -u munge -- munged --socket="$DIR/munge-socket/munge.socket" \
    --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munge/munged.pid" \
    --log-file="$DIR/munge/munged.log" --seed-file="$DIR/munge/munged.seed" \
    </dev/null >>"$DIR/log/munged.out" 2>&1 \
    || { say "munged did not start:"; cat "$DIR/log/munged.out" "$DIR/munge/munged.log" >&2 || true; exit 1; }
  cp "$DIR/munge/munged.pid" "$DIR/munged.pid"
  slurmctld -f "$CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 \
    || { say "slurmctld did not start:"; tail -20 "$DIR/log/slurmctld.out" "$DIR/log/slurmctld.log" >&2 || true; stop; exit 1; }
  slurmd -f "$CONF" </dev/null >>"$DIR/log/slurmd.out" 2>&1 \
    || { say "slurmd did not start:"; tail -20 "$DIR/log/slurmd.out" "$DIR/log/slurmd.log" >&2 || true; stop; exit 1; }

  local state=""
  for _ in $(seq 1 300); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
    case "$state" in idle*|mixed*|allocated*) break ;; esac
    sleep 0.1
  done
  case "$state" in
    idle*|mixed*|allocated*) ;;
    *)
      say "node $host is '${state:-unknown}' after 30 s; slurmctld and slurmd logs:"
      tail -15 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
      stop
      exit 1 ;;
  esac
  say "cluster up in $DIR: node $host ($cpus CPUs, ${mem_mb} MB), partition debug, slurmctld :$ctld_port (pid $(pid_of slurmctld)), slurmd :$slurmd_port (pid $(pid_of slurmd))"
  echo "export SLURM_CONF=$CONF"
}

status() {
  local name
  for name in munged slurmctld slurmd; do
    local pid
    pid=$(pid_of "$name")
    if alive "$pid"; then echo "$name: running (pid $pid)"; else echo "$name: not running"; fi
  done
  [ -f "$CONF" ] && sinfo 2>&1 || true
}

case "$cmd" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status [DIR]" >&2; exit 2 ;;
esac
