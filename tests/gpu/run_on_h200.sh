#!/bin/sh
# run_on_h200.sh - every GPU check of the decode family, on a machine with an sm_90a GPU, from the
# repository root with a build tree at $BUILD (default build-dec; carry it when the tree moved):
#   the GPU test program (every table row vs the CPU reference), compute-sanitizer memcheck on a
#   small grid of every dtype pair and row tile, `mla run` (main job, checked) and `mla bench`.
# Logs go to $OUT (default ./gpu-logs). Exit status: nonzero if any check failed.
set -u
BUILD=${BUILD:-build-dec}
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
export MLA_CODEOBJECT_DIR="$PWD/$BUILD/codeobjects"
T="$BUILD/tools/mla/mla"
rc=0
"$BUILD/tests/gpu/gpu_decode_test" ${QUICK:+--quick} >"$OUT/gpu_test.log" 2>&1 || rc=1
tail -3 "$OUT/gpu_test.log"
for a in "--heads 16" "--heads 32" "--heads 128 --qlen 2 --page-size 16" "--dtype fp8 --heads 32 --page-size 1" \
         "--dtype bf16 --kv-dtype fp8 --heads 64" "--dtype fp8 --heads 8 --qlen 4"; do
    compute-sanitizer --tool memcheck --error-exitcode 9 "$T" run --batch 3 --kv-len 300 --iters 1 --check -1 $a \
        >>"$OUT/sanitizer.log" 2>&1 || rc=1
done
grep -E "ERROR SUMMARY" "$OUT/sanitizer.log"
for a in "" "--heads 128" "--dtype fp8" "--qlen 2"; do "$T" run $a >>"$OUT/run.log" 2>&1 || rc=1; done
grep -E "check:|decode:" "$OUT/run.log"
"$T" bench >"$OUT/bench.log" 2>&1 || rc=1
cat "$OUT/bench.log"
exit $rc
