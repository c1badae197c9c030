#!/usr/bin/env bash
# End-to-end test of cluster builds on a real single-node Slurm (issue 18).
#
# As root: installs Debian's slurm-wlm and munge if missing, starts munged (unless one answers
# already), slurmctld and slurmd with a private configuration under a temporary directory
# (SLURM_CONF; /etc/slurm is not touched), then:
#   1. builds English 2-5 with `dtb gen` (the reference);
#   2. submits the same build with the script of `dtb plan --emit slurm`, one slice's job made
#      slow (it sleeps once inside the job), cancels that job while it runs, and checks that
#      its dependants are cancelled and that nothing is left queued;
#   3. runs the submission script again, checks it submits only the missing slices, and that
#      the finished directory is byte-identical (cmp, file by file) to the reference.
# Stops every daemon it started, whatever happens. Needs a release `dtb` (built here if
# DTB is not set). Takes about two minutes.
#
# Usage: tests/slurm/run.sh            (from anywhere; `.ci/run` calls it)
set -euo pipefail
cd "$(dirname "$0")/../.."

PIECES=${PIECES:-5}
# The slice whose job is cancelled mid-run: a 3-piece slice that many 4- and 5-piece
# slices read (their jobs wait on it with afterok).
SLOW=${SLOW:-0111}

say() { echo "slurm-test: $*"; }
fail() { echo "slurm-test: FAILED: $*" >&2; exit 1; }

if [ "$(id -u)" != 0 ]; then fail "must run as root (it installs and starts slurm and munge)"; fi

if ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  say "installing slurm-wlm and munge"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

if [ -z "${DTB:-}" ]; then
  cargo build --release --quiet --bin dtb
  DTB=$PWD/target/release/dtb
fi
DTB=$(realpath "$DTB")
# The submission script takes DTB from its environment when set, over the program the plan
# names; a DTB given to this test must not reach it, or the jobs bypass the slow wrapper.
export -n DTB

WORK=$(mktemp -d /tmp/dtb-slurm-test.XXXXXX)
PIDS=()
cleanup() {
  local status=$?
  # Jobs first (slurmstepd outlives slurmd), then the daemons.
  if [ -n "${SLURM_CONF:-}" ] && [ -s "$WORK/slurmctld.pid" ]; then
    scancel --quiet --full --user=root 2>/dev/null || true
    for _ in $(seq 100); do
      [ -z "$(squeue --noheader --format=%i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  # Anything a job of this run left behind (a step daemon outlives its slurmd).
  pkill -9 -f "$WORK" 2>/dev/null || true
  for p in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
  done
  if [ $status -ne 0 ] && [ -d "$WORK/log" ]; then
    echo "--- slurmctld.log (tail)" >&2; tail -20 "$WORK/log/slurmctld.log" >&2 || true
    echo "--- slurmd.log (tail)" >&2; tail -20 "$WORK/log/slurmd.log" >&2 || true
  fi
  rm -rf "$WORK"
  exit $status
}
trap cleanup EXIT

# munge: the system key (created if missing) and daemon (started if none answers).
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
  mkdir -p /etc/munge /var/lib/munge /var/log/munge /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
  fi
  chown -R munge:munge /etc/munge /var/lib/munge /var/log/munge /run/munge
  chmod 0400 /etc/munge/munge.key
  munged --force 2>/dev/null
  PIDS+=("$(cat /run/munge/munged.pid)")
  munge -n | unmunge >/dev/null || fail "munge does not answer"
fi

HOST=$(hostname -s)
CPUS=$(nproc)
mkdir -p "$WORK/ctld" "$WORK/d" "$WORK/log"
export SLURM_CONF=$WORK/slurm.conf
cat > "$SLURM_CONF" <<EOF
ClusterName=dtbtest
SlurmctldHost=$HOST
SlurmUser=root
SlurmdUser=root
SlurmctldPort=16817
SlurmdPort=16818
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/d
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
NodeName=$HOST CPUs=$CPUS RealMemory=4000 State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
for _ in $(seq 50); do [ -s "$WORK/slurmctld.pid" ] && break; sleep 0.1; done
PIDS+=("$(cat "$WORK/slurmctld.pid")")
slurmd -f "$SLURM_CONF"
for _ in $(seq 50); do [ -s "$WORK/slurmd.pid" ] && break; sleep 0.1; done
PIDS+=("$(cat "$WORK/slurmd.pid")")
for _ in $(seq 100); do
  state=$(sinfo --noheader --format=%T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
[ "$state" = idle ] || fail "the node is '$state', not idle"
say "slurm is up on $HOST ($CPUS cpus)"

# The reference build.
"$DTB" gen --variant english --pieces "$PIECES" --out "$WORK/ref" --threads "$CPUS" >/dev/null 2>&1 \
  || fail "the reference build failed"

# The test's program: dtb, but the first job of slice $SLOW sleeps inside the job first, so
# that it is running (not finished) when cancelled.
cat > "$WORK/dtb-slow" <<EOF
#!/usr/bin/env bash
case " \$* " in
  *" --slice $SLOW "*) if mkdir "$WORK/slow-once" 2>/dev/null; then sleep 600; fi ;;
esac
exec "$DTB" "\$@"
EOF
chmod +x "$WORK/dtb-slow"

OUT=$WORK/slurm
"$DTB" plan --variant english --pieces "$PIECES" --emit slurm --out "$OUT" --program "$WORK/dtb-slow" \
  > "$WORK/submit.sh"
units=$(grep -c '^unit ' "$WORK/submit.sh")

queued() { squeue --noheader --format=%i | wc -l; }
wait_empty() {
  for _ in $(seq 600); do [ "$(queued)" = 0 ] && return 0; sleep 0.5; done
  squeue >&2; fail "jobs still queued after 5 minutes"
}
state_of() { scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# The plan's units, one line each: slice, file, the slices it reads.
awk '$1 == "unit" { f = 0; line = $2
  for (i = 3; i <= NF; i++) { if (f) line = line " " $i; else if ($i ~ /\.(wld|dtw)$/) { f = 1; line = line " " $i } }
  print line }' "$WORK/submit.sh" > "$WORK/units.txt"
# What cancelling $SLOW must cancel: every unit that reads it, directly or not.
expected=" $SLOW "
changed=1
while [ $changed = 1 ]; do
  changed=0
  while read -r m _file reads; do
    [[ "$expected" == *" $m "* ]] && continue
    for r in $reads; do
      if [[ "$expected" == *" $r "* ]]; then expected="$expected$m "; changed=1; break; fi
    done
  done < "$WORK/units.txt"
done
n_expected=$(wc -w <<< "$expected")
[ "$n_expected" -gt 1 ] || fail "no unit reads slice $SLOW"

# First submission.
bash "$WORK/submit.sh" > "$WORK/first.txt"
grep -q "^submitted $units jobs$" "$WORK/first.txt" || fail "first run: $(tail -1 "$WORK/first.txt"), expected $units jobs"
slow_job=$(awk -v m="$SLOW" '$1 == m {print $2}' "$WORK/first.txt")
# Running, and inside its sleep: Slurm says RUNNING before the job's script has started, and a
# job cancelled before its `mkdir` would leave the sleep to the second run's job of $SLOW.
for _ in $(seq 300); do
  [ "$(state_of "$slow_job")" = RUNNING ] && [ -d "$WORK/slow-once" ] && break
  sleep 0.2
done
if [ "$(state_of "$slow_job")" != RUNNING ] || [ ! -d "$WORK/slow-once" ]; then
  scontrol show job "$slow_job" >&2 || true
  cat "$OUT/.dtb-slurm-$SLOW.log" >&2 || true
  ls -la "$WORK" >&2
  fail "slice $SLOW's job never ran: $(state_of "$slow_job")"
fi
say "first run: $units jobs; cancelling slice $SLOW's job $slow_job while it runs ($((n_expected - 1)) units read it)"
scancel "$slow_job"
wait_empty
# Every job of the first run: cancelled (and its file missing) exactly when it reads $SLOW.
missing=0
while read -r m id; do
  s=$(state_of "$id")
  file=$(awk -v m="$m" '$1 == m {print $2}' "$WORK/units.txt")
  if [[ "$expected" == *" $m "* ]]; then
    [ "$s" = CANCELLED ] || fail "slice $m (job $id) reads $SLOW but is $s, not CANCELLED"
    [ ! -e "$OUT/$file" ] || fail "cancelled slice $m has its file $file"
    missing=$((missing + 1))
  else
    [ "$s" = COMPLETED ] || fail "slice $m (job $id) does not read $SLOW but is $s"
    [ -f "$OUT/$file" ] || fail "completed slice $m has no file $file"
  fi
done < <(awk 'NF == 2 && $1 != "submitted" {print $1, $2}' "$WORK/first.txt")
say "after the cancel: slice $SLOW and the $((missing - 1)) slices that read it cancelled, the other $((units - missing)) completed"

# Second submission: only what is missing.
bash "$WORK/submit.sh" > "$WORK/second.txt"
grep -q "^submitted $missing jobs$" "$WORK/second.txt" || fail "second run: $(tail -1 "$WORK/second.txt"), expected $missing jobs"
wait_empty
while read -r id; do
  s=$(state_of "$id")
  [ "$s" = COMPLETED ] || fail "second run: job $id is $s; log: $(cat "$OUT"/.dtb-slurm-*.log | tail -5)"
done < <(awk 'NF == 2 {print $2}' "$WORK/second.txt")

# Byte-identical to dtb gen: the same table files, each equal.
ref_files=$(cd "$WORK/ref" && ls english-* | sort)
out_files=$(cd "$OUT" && ls english-* | sort)
[ "$ref_files" = "$out_files" ] || fail "file lists differ: $(diff <(echo "$ref_files") <(echo "$out_files") | head)"
n=0
for f in $ref_files; do cmp -s "$WORK/ref/$f" "$OUT/$f" || fail "$f differs"; n=$((n + 1)); done
say "second run: $missing jobs, all completed; $n files byte-identical to dtb gen --pieces $PIECES"

# Again: nothing to do.
bash "$WORK/submit.sh" | grep -q "^submitted 0 jobs$" || fail "a third run submitted jobs"
say "ok"
