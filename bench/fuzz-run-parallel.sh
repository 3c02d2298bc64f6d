#!/bin/bash
# libFuzzer over many cores: each target as J parallel jobs (-jobs=J -workers=J) sharing one
# corpus (a copy of fuzz/corpus/T), RUNS executions per job (or T:Ns: N seconds per job); prints the executions summed over
# the jobs' logs and any job's ASan/UBSan report. For a machine with more cores than this one (the
# lent GPU machine's 16): stage the fuzz binaries built here (build-fuzz/fuzz/fuzz-T, clang,
# ASan+UBSan) with libsqlite3.so.0 and libyaml-0.so.2 beside them in .gpu/fuzz/ next to this
# script, then run it from there:  J=15 bash run.sh merge:67000 sweep:67000 serve:67000
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
J=${J:-15}
for spec in "$@"; do
  t=${spec%%:*}; runs=${spec#*:}
  mkdir -p w-$t logs-$t && cp ../../fuzz/corpus/$t/* w-$t/
  s=$(date +%s)
  # T:RUNS executions per job, or T:Ns (e.g. fuzz:20s) a time limit per job
  case $runs in *s) lim=-max_total_time=${runs%s} ;; *) lim=-runs=$runs ;; esac
  (cd logs-$t && ../fuzz-$t ../w-$t -jobs=$J -workers=$J $lim -max_len=65536 -rss_limit_mb=4096 >/dev/null 2>&1)
  rc=$?
  total=0; fails=0
  for f in logs-$t/fuzz-*.log; do
    n=$(grep -aE '^#[0-9]+' "$f" | tail -1 | sed 's/^#\([0-9]*\).*/\1/'); total=$((total + ${n:-0}))
    grep -aqE 'ERROR|SUMMARY: (Address|Undefined|Leak)' "$f" && { fails=$((fails+1)); grep -aE 'ERROR|SUMMARY|#[0-9]+ in ' "$f" | head -20; }
  done
  echo "fuzz-$t: $J jobs x $runs runs: $total executions in $(( $(date +%s) - s )) s, $fails jobs with errors, exit $rc; last line of job 0: $(grep -aE 'DONE|ERROR|SUMMARY' logs-$t/fuzz-0.log | tail -1)"
done
nproc; uname -r
