#!/usr/bin/env bash
# A real Slurm job array: `kernelsight sweep --emit slurm` submitted with sbatch to a one-node
# Slurm cluster on this machine, gathered with `kernelsight merge`, must give the same sweep.csv
# as the same sweep run locally with -j 2.
#
# usage: slurm_test.sh KERNELSIGHT   (from the source root; ctest does)
#        slurm_test.sh KERNELSIGHT --run COMMAND [ARG...]
#          starts the same one-node cluster, runs COMMAND in it instead of the test (SLURM_CONF
#          set: sbatch, squeue, scontrol work), then stops it: try a sweep's job array without a
#          cluster, e.g. --run bash (an interactive shell).
#
# Installs Debian's slurmctld, slurmd, slurm-client and munge when missing (apt-get, as root).
# Everything else is private to a temporary folder: its own munge key and socket, its own
# slurm.conf (SLURM_CONF), free ports, state and logs; nothing under /etc is changed and no
# service manager is needed. The daemons it starts are stopped on exit, whatever happens.
# Exit 0: passed; 77: skipped (cannot install Slurm here; the reason is printed); else failed.
set -euo pipefail

SKIP=77
log() { printf '[slurm-test] %s\n' "$*"; }
skip() { log "SKIPPED: $*"; exit "$SKIP"; }

# KS_SLURM_SKIP=reason: the build asked to skip (the sanitizer build: the same test already ran).
[ -z "${KS_SLURM_SKIP:-}" ] || skip "$KS_SLURM_SKIP"

CLI="$(realpath "${1:?usage: slurm_test.sh KERNELSIGHT [--run COMMAND...]}")"
shift
RUN=()
if [ "${1:-}" = "--run" ]; then
  shift
  RUN=("$@")
  [ ${#RUN[@]} -gt 0 ] || { log "--run: give a command"; exit 2; }
fi
SOURCE="$(pwd)"
SWEEP="$SOURCE/tests/slurm/tiny_sweep.yaml"
TIMEOUT_S="${KS_SLURM_TIMEOUT_S:-180}"

# ---------------------------------------------------------------- install
SLURM_PACKAGES=(slurmctld slurmd slurm-client munge)
missing=()
for tool in slurmctld slurmd sbatch squeue sacct munged; do
  command -v "$tool" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
export PATH="$PATH:/usr/sbin:/sbin"
if [ ${#missing[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || skip "Slurm is not installed (${missing[*]} missing) and this is not root: apt-get install ${SLURM_PACKAGES[*]}"
  command -v apt-get >/dev/null 2>&1 || skip "Slurm is not installed (${missing[*]} missing) and there is no apt-get"
  log "installing ${SLURM_PACKAGES[*]} (${missing[*]} missing)"
  t0=$SECONDS
  # Install; if that fails (no or stale package lists on a fresh machine), update and try again.
  # DPkg::Lock::Timeout: wait for another apt-get to finish rather than fail.
  APT=(apt-get -o DPkg::Lock::Timeout=300)
  if ! DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -qq --no-install-recommends "${SLURM_PACKAGES[@]}" >/tmp/ks-slurm-apt.$$ 2>&1; then
    "${APT[@]}" update -qq >>/tmp/ks-slurm-apt.$$ 2>&1 || true
    DEBIAN_FRONTEND=noninteractive "${APT[@]}" install -y -qq --no-install-recommends "${SLURM_PACKAGES[@]}" >>/tmp/ks-slurm-apt.$$ 2>&1 ||
      { tail -5 /tmp/ks-slurm-apt.$$; rm -f /tmp/ks-slurm-apt.$$; skip "apt-get install ${SLURM_PACKAGES[*]} failed (above)"; }
  fi
  rm -f /tmp/ks-slurm-apt.$$
  log "installed in $((SECONDS - t0)) s"
fi

# ---------------------------------------------------------------- a private one-node cluster
[ "$(id -u)" -eq 0 ] || skip "slurmd must run as root to start jobs; run this test as root"

T="$(mktemp -d /tmp/ks-slurm-test.XXXXXX)"
chmod 711 "$T"  # munged wants its socket's folders searchable by all
PIDS=()
OUR_CONF=""
cleanup() {
  local rc=$?
  # Every job of this private cluster is ours: cancel what still runs before the daemons go.
  # (OUR_CONF, not SLURM_CONF: an inherited SLURM_CONF names a real cluster, never touched here.)
  if [ -n "$OUR_CONF" ] && [ ${#PIDS[@]} -gt 1 ]; then
    SLURM_CONF="$OUR_CONF" squeue -h -o %A 2>/dev/null | SLURM_CONF="$OUR_CONF" xargs -r scancel 2>/dev/null || true
    for _ in $(seq 50); do
      SLURM_CONF="$OUR_CONF" squeue -h -t RUNNING,COMPLETING -o %A 2>/dev/null | grep -q . || break
      sleep 0.1
    done
  fi
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ $rc -ne 0 ] && [ $rc -ne $SKIP ]; then
    for f in "$T"/log/*.log; do [ -f "$f" ] && { log "--- $f (last lines)"; tail -15 "$f"; }; done
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$T/log" "$T/state" "$T/spool" "$T/munge"

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HOST="$(hostname -s)"
CPUS="$(nproc)"
MEM_MB="$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)"
CTLD_PORT="$(free_port)"
SLURMD_PORT="$(free_port)"
while [ "$SLURMD_PORT" = "$CTLD_PORT" ]; do SLURMD_PORT="$(free_port)"; done

# munge: its own key, socket and state, so a system munged (if any) is left alone.
dd if=/dev/urandom of="$T/munge/munge.key" bs=1024 count=1 status=none
chmod 600 "$T/munge/munge.key"
MUNGE_SOCKET="$T/munge/munge.socket"
munged --force --key-file="$T/munge/munge.key" --socket="$MUNGE_SOCKET" --pid-file="$T/munge/munged.pid" \
  --log-file="$T/log/munged.log" --seed-file="$T/munge/munge.seed" --foreground >>"$T/log/munged.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 50); do [ -S "$MUNGE_SOCKET" ] && break; sleep 0.1; done
[ -S "$MUNGE_SOCKET" ] || { log "munged did not start"; exit 1; }

OUR_CONF="$T/slurm.conf"
export SLURM_CONF="$OUR_CONF"
cat >"$SLURM_CONF" <<CONF
# One-node Slurm cluster for the KernelSight Slurm test (written by tests/slurm/slurm_test.sh).
ClusterName=kstest
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
MinJobAge=600
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$MEM_MB State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# -D: in the foreground (no service manager, no daemonising), so this script owns them.
slurmctld -D -i >"$T/log/slurmctld.out" 2>&1 &
PIDS+=($!)
slurmd -D -N "$HOST" >"$T/log/slurmd.out" 2>&1 &
PIDS+=($!)

ready=""
for _ in $(seq 100); do
  if sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; then ready=1; break; fi
  sleep 0.2
done
[ -n "$ready" ] || { log "the node did not come up: $(sinfo -N 2>&1 | tail -2)"; exit 1; }
log "cluster up: $(sinfo -h -N -o '%N %c CPUs %T')"
if [ ${#RUN[@]} -gt 0 ]; then
  log "running ${RUN[*]} (SLURM_CONF=$SLURM_CONF)"
  status=0
  "${RUN[@]}" || status=$?
  exit "$status"
fi

# ---------------------------------------------------------------- the sweep, both ways
"$CLI" sweep "$SWEEP" -j 2 --out "$T/local" >"$T/log/local.log" 2>&1 || { cat "$T/log/local.log"; exit 1; }
"$CLI" sweep "$SWEEP" --emit slurm --out "$T/slurm"
MEM_ARGS=()
[ "$MEM_MB" -ge 4096 ] || MEM_ARGS=(--mem=$((MEM_MB / 2))M)  # the script asks 4G; a smaller machine gets less
JOB="$(sbatch --parsable ${MEM_ARGS[@]+"${MEM_ARGS[@]}"} "$T/slurm/sweep.slurm")"
JOB="${JOB%%;*}"
log "submitted job array $JOB"
t0=$SECONDS
while squeue -h -j "$JOB" 2>/dev/null | grep -q .; do
  if [ $((SECONDS - t0)) -gt "$TIMEOUT_S" ]; then
    log "job array $JOB still queued or running after ${TIMEOUT_S}s:"; squeue -j "$JOB" || true; exit 1
  fi
  sleep 0.5
done
log "job array $JOB finished in $((SECONDS - t0)) s"
# No accounting daemon here (sacct needs slurmdbd): the controller keeps finished jobs for MinJobAge.
scontrol -o show job "$JOB" | sort | sed -n 's/.*JobId=\([0-9]*\) .*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z]*\) .*ExitCode=\([0-9:]*\).*/  task \2 (job \1): \3, exit \4/p'

"$CLI" merge "$T/slurm" || { for f in "$T"/slurm/points/slurm-*.out; do log "--- $f"; cat "$f"; done; exit 1; }
ls "$T"/slurm/points/slurm-"$JOB"_*.out >/dev/null || { log "no Slurm output files: the tasks did not run under Slurm"; exit 1; }
if ! cmp "$T/slurm/sweep.csv" "$T/local/sweep.csv"; then
  diff "$T/slurm/sweep.csv" "$T/local/sweep.csv" | head -20
  exit 1
fi
log "PASSED: the Slurm job array's merged sweep.csv equals the local -j 2 run's ($(($(wc -l <"$T/local/sweep.csv") - 1)) points)"
