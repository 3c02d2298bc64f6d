#!/bin/sh
# Outputs lose nothing (issue 12, item 1), end to end through the binary: every writer (trace
# import, merge, export, summary; sweep -o/--csv; merge -o/--csv; calibrate; compare) refuses an
# output that is an input (by inode: ./X.db, symbolic and hard links), a target that is not a
# regular file (device node, FIFO, directory), an existing file without --force, and a target
# another process holds locked (SQLite BEGIN EXCLUSIVE, flock); a failed run with --force leaves
# the old output as it was; SIGINT in the middle of an import, a merge or a sweep leaves the old
# output as it was and no temporary behind.
# usage: outputs.sh K3SIM CALIB_GEN_TRACE
set -u
K3SIM=$1
GEN=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/k3outputs-XXXXXX")
lockpid=
trap '[ -n "$lockpid" ] && kill $lockpid 2>/dev/null; rm -rf "$dir"' EXIT
fails=0
ok() { printf 'ok   %s\n' "$1"; }
bad() { printf 'FAIL %s\n' "$1"; fails=$((fails + 1)); }

# expect NAME STATUS GREP-PATTERN CMD... : exit status and a pattern in stdout+stderr
expect() {
	name=$1 want=$2 pat=$3
	shift 3
	"$@" >"$dir/out" 2>"$dir/err"
	got=$?
	if [ "$got" -ne "$want" ]; then
		bad "$name: exit $got, wanted $want"
		sed 's/^/    /' "$dir/out" "$dir/err" | head -5
	elif [ -n "$pat" ] && ! cat "$dir/out" "$dir/err" | grep -q -- "$pat"; then
		bad "$name: no '$pat' in the output"
		sed 's/^/    /' "$dir/out" "$dir/err" | head -10
	else
		ok "$name"
	fi
}
sum() { if [ -e "$1" ]; then cksum <"$1"; else echo missing; fi; }
# same NAME FILE SUM: FILE still has checksum SUM
same() { if [ "$(sum "$2")" = "$3" ]; then ok "$1"; else bad "$1: the file changed or is gone"; fi; }
# no temporaries (ours, or the old PATH.tmp.PID / PATH.tmpPID ones) anywhere under $dir
no_temps() {
	left=$(find "$dir" -name '*.k3tmp-*' -o -name '*.tmp.[0-9]*' -o -name '*.db.tmp[0-9]*' | head -3)
	if [ -z "$left" ]; then ok "$1: no temporary left"; else bad "$1: left $left"; fi
}

cat >"$dir/t.json" <<'JSON'
{"traceEvents": [
 {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 10, "tid": 11, "ts": 101.0, "dur": 2.0, "args": {"correlation": 1}},
 {"ph": "X", "cat": "kernel", "name": "void gemm<64>(float*)", "pid": 0, "tid": 7, "ts": 105.0, "dur": 10.0, "args": {"device": 0, "stream": 7, "correlation": 1}}
]}
JSON
printf '{"traceEvents": [{"ph": "X", "name": "k", ' >"$dir/truncated.json"
"$K3SIM" trace import -q "$dir/t.json" -o "$dir/x.db" || bad "setup: import"
"$K3SIM" trace import -q "$dir/t.json" -o "$dir/y.db" || bad "setup: import"
x=$(sum "$dir/x.db")

# ---- trace import: the output is the input ----
cd "$dir" || exit 1
expect "import X.db -o X.db -f refused" 1 "is also an input" "$K3SIM" trace import x.db -o x.db -f
same "import X.db -o X.db -f: the input is intact" x.db "$x"
expect "import X.db -o ./X.db -f refused" 1 "is also an input" "$K3SIM" trace import x.db -o ./x.db -f
same "import X.db -o ./X.db -f: the input is intact" x.db "$x"
ln -s x.db sym.db
ln x.db hard.db
expect "import through a symbolic link refused" 1 "is also an input" "$K3SIM" trace import x.db -o sym.db -f
expect "import through a hard link refused" 1 "is also an input" "$K3SIM" trace import x.db -o hard.db -f
same "links: the input is intact" x.db "$x"
cd - >/dev/null || exit 1

# ---- -f never removes the old output before success ----
y=$(sum "$dir/y.db")
expect "failed import -f" 1 "truncated.json:1:" "$K3SIM" trace import "$dir/truncated.json" -o "$dir/y.db" -f
same "failed import -f: the old output is intact" "$dir/y.db" "$y"
expect "import without -f refused" 1 "file exists (use --force" "$K3SIM" trace import "$dir/t.json" -o "$dir/y.db"
expect "import -f replaces" 0 "1 kernels" "$K3SIM" trace import "$dir/t.json" -o "$dir/y.db" -f

# ---- not a regular file: refused, even with --force ----
mkfifo "$dir/fifo"
mkdir "$dir/adir"
if [ "$(id -u)" -eq 0 ] && mknod "$dir/null" c 1 3 2>/dev/null; then
	dev="$dir/null" # a device node of our own: as root, rename() replaced /dev/null itself
else
	dev=/dev/null
fi
for target in "$dev" "$dir/fifo" "$dir/adir"; do
	expect "sweep -o $(basename "$target") refused" 1 "not a regular file" "$K3SIM" sweep default -o "$target" --quiet
	expect "sweep --csv $(basename "$target") refused" 1 "not a regular file" "$K3SIM" sweep default --csv "$target" --quiet
	expect "import -o $(basename "$target") refused" 1 "not a regular file" "$K3SIM" trace import "$dir/t.json" -o "$target" -f
done
[ -c "$dev" ] && ok "the device node is still a device node" || bad "the device node was replaced"
[ -p "$dir/fifo" ] && ok "the FIFO is still a FIFO" || bad "the FIFO was replaced"
[ -d "$dir/adir" ] && ok "the directory is still a directory" || bad "the directory was replaced"
expect "sweep -o FIFO --force refused" 1 "not a regular file" "$K3SIM" sweep default -o "$dir/fifo" --force --quiet

# ---- existing files are replaced only with --force ----
echo "user data" >"$dir/user.db"
echo "user data" >"$dir/user.csv"
u=$(sum "$dir/user.db")
expect "sweep -o existing refused" 1 "file exists" "$K3SIM" sweep default -o "$dir/user.db" --quiet
same "sweep -o: the user's file is intact" "$dir/user.db" "$u"
expect "sweep --csv existing refused" 1 "file exists" "$K3SIM" sweep default --csv "$dir/user.csv" --quiet
same "sweep --csv: the user's file is intact" "$dir/user.csv" "$u"
expect "sweep -o --force replaces" 0 "" "$K3SIM" sweep default -o "$dir/user.db" --csv "$dir/user.csv" --force --quiet
expect "sweep -o X --csv X refused" 1 "already an output" "$K3SIM" sweep default -o "$dir/both" --csv "$dir/both" --quiet
echo "user data" >"$dir/user.json"
expect "export existing refused" 1 "file exists" "$K3SIM" trace export "$dir/x.db" -o "$dir/user.json"
same "export: the user's file is intact" "$dir/user.json" "$u"
expect "export -o the database refused" 1 "is also an input" "$K3SIM" trace export "$dir/x.db" -o "$dir/x.db"
same "export -o the database: intact" "$dir/x.db" "$x"
expect "summary -o existing refused" 1 "file exists" "$K3SIM" trace summary "$dir/x.db" -o "$dir/user.json"
same "summary -o: the user's file is intact" "$dir/user.json" "$u"

# ---- merge of sweep shards: the output is a shard ----
cat >"$dir/grid.yaml" <<'YAML'
name: grid
model: kimi-k3
sweep:
  context: [4096, 65536]
  batch: [1, 4]
YAML
"$K3SIM" sweep "$dir/grid.yaml" --shard 1/2 -o "$dir/s1.db" --quiet || bad "setup: shard 1"
"$K3SIM" sweep "$dir/grid.yaml" --shard 2/2 -o "$dir/s2.db" --quiet || bad "setup: shard 2"
expect "sweep -o the scenario refused" 1 "is also an input" "$K3SIM" sweep "$dir/grid.yaml" -o "$dir/grid.yaml" --force --quiet
s1=$(sum "$dir/s1.db")
cd "$dir" || exit 1
expect "merge s1 s2 -o ./s1 refused" 1 "is also an input" "$K3SIM" merge s1.db s2.db -o ./s1.db
same "merge -o ./s1: shard 1 is intact" s1.db "$s1"
expect "merge --csv ./s2 refused" 1 "is also an input" "$K3SIM" merge s1.db s2.db -o m.db --csv ./s2.db
[ -e m.db ] && bad "a refused merge wrote its database" || ok "a refused merge writes nothing"
u=$(sum user.db)
expect "merge -o existing refused" 1 "file exists" "$K3SIM" merge s1.db s2.db -o user.db
same "merge -o: the user's file is intact" user.db "$u"
expect "merge --force" 0 "4 of 4 points" "$K3SIM" merge s1.db s2.db -o user.db --csv user.csv --force
cd - >/dev/null || exit 1

# ---- trace merge: by inode too ----
cd "$dir" || exit 1
expect "trace merge -o ./x.db refused" 1 "is also an input" "$K3SIM" trace merge x.db y.db -o ./x.db -f
same "trace merge -o ./x.db: x.db is intact" x.db "$x"
cd - >/dev/null || exit 1

# ---- locks held by another process ----
if python3 - "$dir/y.db" "$dir/ready" <<'PY' &
import sqlite3, sys, time
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(60)
PY
then :; fi
lockpid=$!
i=0
while [ ! -e "$dir/ready" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
y=$(sum "$dir/y.db")
expect "import onto a database under BEGIN EXCLUSIVE refused" 1 "in use by process $lockpid" "$K3SIM" trace import "$dir/t.json" -o "$dir/y.db" -f
expect "trace merge onto it refused" 1 "in use by process" "$K3SIM" trace merge "$dir/x.db" -o "$dir/y.db" -f
kill $lockpid 2>/dev/null
wait $lockpid 2>/dev/null
lockpid=
same "the locked database is intact" "$dir/y.db" "$y"
rm -f "$dir/ready"
if python3 - "$dir/user.csv" "$dir/ready" <<'PY' &
import fcntl, sys, time
f = open(sys.argv[1], "rb")
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)
PY
then :; fi
lockpid=$!
i=0
while [ ! -e "$dir/ready" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
u=$(sum "$dir/user.csv")
expect "import -f onto a flocked file refused" 1 "locked by another process" "$K3SIM" trace import "$dir/t.json" -o "$dir/user.csv" -f
expect "sweep --csv --force onto a flocked file refused" 1 "locked by another process" "$K3SIM" sweep default --csv "$dir/user.csv" --force --quiet
kill $lockpid 2>/dev/null
wait $lockpid 2>/dev/null
lockpid=
same "the flocked file is intact" "$dir/user.csv" "$u"

# ---- calibrate: the base preset is an input ----
"$GEN" "$dir/cal.db" 3000 || bad "setup: calib trace"
"$K3SIM" calibrate "$dir/cal.db" -o "$dir/cal.yaml" -q || bad "setup: calibrate"
c=$(sum "$dir/cal.yaml")
expect "calibrate --hw P -o P refused" 1 "is also an input" "$K3SIM" calibrate "$dir/cal.db" --hw "$dir/cal.yaml" -o "$dir/cal.yaml" --force
expect "calibrate -o the trace refused" 1 "is also an input" "$K3SIM" calibrate "$dir/cal.db" -o "$dir/cal.db" --force
same "calibrate: the preset is intact" "$dir/cal.yaml" "$c"
mkdir "$dir/mine"
echo "my notes" >"$dir/mine/calibration.md"
expect "calibrate --report into someone's directory refused" 1 "file exists" "$K3SIM" calibrate "$dir/cal.db" -o "$dir/cal2.yaml" --report "$dir/mine"
[ -e "$dir/cal2.yaml" ] && bad "a refused report still wrote the preset" || ok "a refused report writes nothing"
grep -q "my notes" "$dir/mine/calibration.md" && ok "the user's calibration.md is intact" || bad "calibration.md replaced"

# ---- compare: a directory k3sim made is refreshed; someone else's is not ----
cmp_args="--models kimi-k3 --contexts 4K,8K --batches 1 --no-charts --quiet"
expect "compare into a new directory" 0 "" "$K3SIM" compare $cmp_args -o "$dir/cmp"
expect "compare again into its own directory" 0 "" "$K3SIM" compare $cmp_args -o "$dir/cmp"
mkdir "$dir/theirs"
echo "their results" >"$dir/theirs/results.json"
expect "compare into someone's directory refused" 1 "file exists" "$K3SIM" compare $cmp_args -o "$dir/theirs"
grep -q "their results" "$dir/theirs/results.json" && ok "their results.json is intact" || bad "results.json replaced"
expect "compare --force" 0 "" "$K3SIM" compare $cmp_args -o "$dir/theirs" --force
no_temps "refusals"

# ---- SIGINT or SIGTERM in the middle: the old output intact, no temporary ----
# interrupt NAME SIG OUT CMD...: run CMD in the background, wait until its temporary beside OUT
# exists, send it SIG (INT or TERM), and check OUT and the directory.
interrupt() {
	name=$1 sig=$2 out=$3
	shift 3
	before=$(sum "$out")
	# a background job of a script starts with SIGINT ignored (POSIX): give it back its default,
	# as a foreground command in a terminal has it
	python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' "$@" >/dev/null 2>&1 &
	pid=$!
	i=0
	while ! ls -A "$(dirname "$out")" | grep -q "^\.$(basename "$out").k3tmp-" && [ $i -lt 1000 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	kill -$sig $pid
	wait $pid 2>/dev/null
	st=$?
	case $sig in INT) want=130 ;; TERM) want=143 ;; *) want=-1 ;; esac
	if [ $st -eq $want ]; then ok "$name: ended by SIG$sig"; else bad "$name: exit $st, wanted $want (SIG$sig)"; fi
	same "$name: the old output is intact" "$out" "$before"
	no_temps "$name"
}
"$GEN" "$dir/big.db" 600000 || bad "setup: big trace"
interrupt "SIGINT mid-import" INT "$dir/y.db" "$K3SIM" trace import "$dir/big.db" -o "$dir/y.db" -f
interrupt "SIGTERM mid-import" TERM "$dir/y.db" "$K3SIM" trace import "$dir/big.db" -o "$dir/y.db" -f
interrupt "SIGINT mid-merge" INT "$dir/y.db" "$K3SIM" trace merge "$dir/big.db" "$dir/x.db" -o "$dir/y.db" -f
cat >"$dir/long.yaml" <<'YAML'
name: long
model: kimi-k3
hw: h200
gpus: 16
parallel: {tp: 8, dp: 2, ep: 16}
workload: {batch: 16, prompt_tokens: 8192, output_tokens: 256}
sweep:
  context: {from: 1024, to: 1048576, times: 2}
  batch: {from: 1, to: 1024, times: 2}
  model: [kimi-k3, k3-full-mla, k3-dsa]
  tp: [1, 2, 4, 8]
  kda_state: [fp32, bf16]
  output_tokens: [64, 128, 256, 512, 1024]
  moe_imbalance: [1.0, 1.1, 1.2, 1.3, 1.5]
YAML
interrupt "SIGINT mid-sweep" INT "$dir/new.db" "$K3SIM" sweep "$dir/long.yaml" -o "$dir/new.db" --csv "$dir/new.csv" -j 1 --quiet
[ -e "$dir/new.db" ] || [ -e "$dir/new.csv" ] && bad "SIGINT mid-sweep: wrote an output" || ok "SIGINT mid-sweep: no output written"
interrupt "SIGINT mid-sweep --force" INT "$dir/user.db" "$K3SIM" sweep "$dir/long.yaml" -o "$dir/user.db" --csv "$dir/user.csv" --force -j 1 --quiet

# trace capture --force of a command that never starts CUDA: the old capture stays (it was
# deleted before the command ran); a run without --force refuses to touch it.
printf 'an older capture\n' >"$dir/cap.db"
capsum=$(sum "$dir/cap.db")
"$K3SIM" trace capture -o "$dir/cap.db" -- /bin/true >/dev/null 2>&1
same "trace capture without --force keeps the old file" "$dir/cap.db" "$capsum"
"$K3SIM" trace capture -o "$dir/cap.db" --force -- /bin/true >/dev/null 2>&1
same "trace capture --force with nothing captured keeps the old file" "$dir/cap.db" "$capsum"
if ls "$dir" | grep -q 'k3sim-old'; then bad "trace capture --force left its aside copy"; else ok "trace capture --force: no aside copy left"; fi

if [ "$fails" -ne 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "all passed"
