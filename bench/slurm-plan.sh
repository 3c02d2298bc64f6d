#!/bin/sh
# The documented cluster path of `k3sim plan` and `k3sim sweep`, for real: brings up a single-node
# Slurm (Debian's slurm-wlm: slurmctld + slurmd, munge) in a scratch directory on this machine,
# submits a sharded sweep and a sharded plan as job arrays (each task passes
# --shard $((SLURM_ARRAY_TASK_ID+1))/$SLURM_ARRAY_TASK_COUNT), merges the shards with
# `k3sim merge`, finishes the plan with `k3sim plan --from`, and checks the results equal the
# unsharded runs byte for byte (sweep: the merged CSV; plan: the JSON and the SQLite database).
# Exit 77 (skipped) where Slurm or munge is not installed (apt-get install slurm-wlm) or cannot
# start here; the daemons run as the current user on private ports and are stopped at the end.
# usage: bench/slurm-plan.sh [K3SIM] [OUT_DIR]    (OUT_DIR keeps the logs and databases)
set -u
K3SIM=${1:-build/cli/k3sim}
K3SIM=$(cd "$(dirname "$K3SIM")" && pwd)/$(basename "$K3SIM")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for p in slurmctld slurmd sbatch squeue sinfo scontrol munged; do
	command -v $p >/dev/null 2>&1 || { echo "skip: $p not found (apt-get install slurm-wlm)"; exit 77; }
done
tmp=$(mktemp -d /tmp/k3sim-slurm.XXXXXX)
OUT=${2:-$tmp/out}
mkdir -p "$OUT" "$tmp/state" "$tmp/spool" "$tmp/munge"
OUT=$(cd "$OUT" && pwd)
ctld_pid=""
slurmd_pid=""
munge_pid=""
cleanup() {
	[ -n "$slurmd_pid" ] && kill "$slurmd_pid" 2>/dev/null
	[ -n "$ctld_pid" ] && kill "$ctld_pid" 2>/dev/null
	sleep 1
	[ -n "$munge_pid" ] && kill "$munge_pid" 2>/dev/null
	cp "$tmp"/*.log "$OUT"/ 2>/dev/null
	rm -rf "$tmp/state" "$tmp/spool" "$tmp/munge"
	[ "$OUT" = "$tmp/out" ] && rm -rf "$tmp"
}
trap cleanup EXIT

# munge with a private key and socket
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 2>/dev/null
chmod 700 "$tmp/munge"
chmod 400 "$tmp/munge/munge.key"
munged --force --key-file="$tmp/munge/munge.key" --socket="$tmp/munge/munge.sock" \
	--pid-file="$tmp/munge/munged.pid" --log-file="$tmp/munged.log" --seed-file="$tmp/munge/seed" ||
	{ echo "skip: munged does not start here"; exit 77; }
munge_pid=$(cat "$tmp/munge/munged.pid")

host=$(hostname -s)
cpus=$(nproc)
user=$(id -un)
port=$((20000 + $$ % 20000))
cat >"$tmp/slurm.conf" <<CONF
ClusterName=k3sim
SlurmctldHost=$host
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$tmp/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=k3sim Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -D -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -f "$SLURM_CONF" >"$tmp/slurmd.out" 2>&1 &
slurmd_pid=$!
up=0
for i in $(seq 1 30); do
	if sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed)'; then up=1; break; fi
	sleep 1
done
if [ $up -ne 1 ]; then
	echo "skip: Slurm did not come up here"
	sed 's/^/# /' "$tmp/slurmctld.out" "$tmp/slurmd.out" "$tmp"/*.log 2>/dev/null | tail -20
	exit 77
fi
echo "Slurm up: $(sinfo -h -o '%P %D nodes %c CPUs %T') (slurm $(sinfo -V | cut -d' ' -f2))"

fails=0
check() { if cmp -s "$2" "$3"; then echo "ok - $1"; else echo "not ok - $1 ($2 vs $3)"; fails=$((fails + 1)); fi; }
N=4
cd "$OUT"

# a sweep (the compare-default scenario: 81 points), 4 array tasks
SWEEP=$ROOT/scenarios/compare-default.yaml
"$K3SIM" sweep "$SWEEP" -o sweep-whole.db --csv sweep-whole.csv --quiet --force
cat >sweep.sbatch <<JOB
#!/bin/sh
#SBATCH --job-name=k3sim-sweep
#SBATCH --output=$OUT/sweep-%a.out
"$K3SIM" sweep "$SWEEP" --shard \$((SLURM_ARRAY_TASK_ID+1))/\$SLURM_ARRAY_TASK_COUNT -j 1 -o "$OUT/sweep-\$SLURM_ARRAY_TASK_ID.db" --quiet --force
JOB
sbatch --wait --array=0-$((N - 1)) sweep.sbatch
"$K3SIM" merge sweep-0.db sweep-1.db sweep-2.db sweep-3.db -o sweep-merged.db --csv sweep-merged.csv --force
check "sweep: merged CSV of the job array = unsharded CSV" sweep-whole.csv sweep-merged.csv

# the plan: K3 on 16..128 H200 at 8K/1K, 4 array tasks
F="--gpus 16..128 --isl 8192 --osl 1024 --ttft 2s --tpot 50ms --short 1 --serve-requests 400"
"$K3SIM" plan $F --json -o plan-whole.db --force >plan-whole.json
cat >plan.sbatch <<JOB
#!/bin/sh
#SBATCH --job-name=k3sim-plan
#SBATCH --output=$OUT/plan-%a.out
"$K3SIM" plan $F --shard \$((SLURM_ARRAY_TASK_ID+1))/\$SLURM_ARRAY_TASK_COUNT -j 1 -o "$OUT/plan-\$SLURM_ARRAY_TASK_ID.db" --force
JOB
sbatch --wait --array=0-$((N - 1)) plan.sbatch
cat plan-0.out plan-1.out plan-2.out plan-3.out
"$K3SIM" merge plan-0.db plan-1.db plan-2.db plan-3.db -o plan-merged.db --force
"$K3SIM" plan $F --from plan-merged.db --json -o plan-final.db --force >plan-final.json
check "plan: JSON from the job array's shards = unsharded JSON" plan-whole.json plan-final.json
check "plan: SQLite from the job array's shards = unsharded SQLite" plan-whole.db plan-final.db
echo "$fails failed"
[ $fails -eq 0 ]
