#!/bin/bash
# One device call: ring (persistent, mbarrier ring) decode vs the committed smem256 and step.
# Carry build-dec and .gpu. From the repo root: bash .gpu/kda-decode-ring/run.sh
export LD_LIBRARY_PATH=$PWD/.gpu
B=build-dec; O=${OUT:-dec-out}; mkdir -p $O
T=$O/tests.log; : >$T
{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv; date -u; } >$O/bench.log 2>&1
cat $O/bench.log
run_test() { # variant filter ('' = whole suite; 'default' = no KDA_DECODE_KERNEL)
	echo "### variant=$1 filter=${2:-all}" >>$T
	if [ "$1" = default ]; then
		if [ -n "$2" ]; then env -u KDA_DECODE_KERNEL KDA_TEST_FILTER="$2" timeout 150 $B/tests/kernels/test-kda-gpu >>$T 2>&1
		else env -u KDA_DECODE_KERNEL -u KDA_TEST_FILTER timeout 150 $B/tests/kernels/test-kda-gpu >>$T 2>&1; fi
	else
		env KDA_DECODE_KERNEL="$1" KDA_TEST_FILTER="$2" timeout 120 $B/tests/kernels/test-kda-gpu >>$T 2>&1
	fi
	echo "test variant=$1 filter=${2:-all} rc=$?" | tee -a $T
}
run_bench() { for v in "$@"; do
	vv=${v%b}
	env KDA_DECODE_KERNEL=$vv timeout 90 $B/kernels/kda-bench --only decode -o $O/dec-$v.csv >>$O/bench.log 2>&1
	echo "bench $v rc=$?"
done; }
run_test default ''
for v in ring2 smem256; do run_test $v '*decode*'; run_test $v '*verify*'; done
grep -E "FAILED|Failure|PASSED|OK \]" $T | sort | uniq -c
grep -E "rel err" $T | grep -vE "rel err [0-9.]+e-(0[3-9]|[1-9][0-9])" | head
run_bench step smem256 ring ring2
# Same arithmetic -> same bits: hashes of outputs and final state per variant.
R=$O/ringcheck.tmp; : >$R
for v in smem256 ring ring2; do
	for shape in "64 96 0" "256 96 1" "1 96 0" "7 5 1"; do
		echo "v=$v $(env KDA_DECODE_KERNEL=$v timeout 60 .gpu/ringcheck/ringcheck $shape 3 | tr '\n' ' ')" >>$R
	done
done
for shape in "64 96 0" "256 96 1" "1 96 0" "7 5 1"; do
	set -- $shape; k="B=$1 H=$2"
	n=$(grep -F " $k " $R | sed 's/^v=[a-z0-9]* //' | sort -u | wc -l)
	echo "ringcheck $shape bf16=$3: $n distinct result line(s) over smem256/ring/ring2"
done | tee -a $T
{ echo "### ringcheck"; cat $R; } >>$T; rm -f $R
if command -v compute-sanitizer >/dev/null; then
	for vf in "ring test_decode_fp32" "ring test_decode_bf16" "ring2 test_decode_fp32"; do
		set -- $vf
		env KDA_DECODE_KERNEL=$1 KDA_TEST_FILTER=$2 timeout 60 compute-sanitizer --tool memcheck $B/tests/kernels/test-kda-gpu >>$O/san.tmp 2>&1
		echo "memcheck $1 $2 rc=$? $(grep 'ERROR SUMMARY' $O/san.tmp | tail -1)" | tee -a $T
	done
	{ echo "### compute-sanitizer"; cat $O/san.tmp; } >>$T; rm -f $O/san.tmp
fi
run_bench smem256b ringb
echo; echo "% of copy (decode, H=96): variant state B=64 128 256 | us B=1(loop) 64 256 | H=12 B=256 %"
for v in step smem256 ring ring2 smem256b ringb; do
	f=$O/dec-$v.csv; [ -f $f ] || continue
	for s in fp32 bf16; do
		awk -F, -v v=$v -v s=$s '$1=="decode" && $2==s && $5==96 {p[$3]=$17; t[$3]=$8; l[$3]=$11}
		  $1=="decode" && $2==s && $5==12 && $3==256 {q=$17}
		  END {printf "%-9s %s %6.1f %6.1f %6.1f | %6.2f %8.1f %8.1f | %5.1f\n", v, s, p[64], p[128], p[256], l[1], t[64], t[256], q}' $f
	done
done
grep -h copy_memcpy $O/dec-*.csv | cut -d, -f8,15
