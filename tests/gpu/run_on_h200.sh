#!/bin/sh
# run_on_h200.sh - every GPU check of the decode family, on a machine with an sm_90a GPU, from the
# repository root with a build tree at $BUILD (default build-perf; carry build-perf/src,
# build-perf/codeobjects, build-perf/tools/mla and build-perf/tests/gpu when the tree moved):
#   1. SASS of the wgmma cubins: HGMMA present, no local memory (LDL/STL);
#   2. the GPU test program (every table row vs the CPU reference; QUICK=1: --quick);
#   3. compute-sanitizer memcheck on a small grid of every dtype pair and row tile;
#   4. `mla run` (main job, varied lengths, checked) and `mla bench` (STEPS=... picks steps).
# Logs go to $OUT (default ./gpu-logs). Exit status: nonzero if any check failed.
set -u
BUILD=${BUILD:-build-perf}
OUT=${OUT:-gpu-logs}
STEPS=${STEPS:-"sass test sanitizer run bench"}
mkdir -p "$OUT"
export MLA_CODEOBJECT_DIR="$PWD/$BUILD/codeobjects"
T="$BUILD/tools/mla/mla"
rc=0
has() { case " $STEPS " in *" $1 "*) return 0 ;; esac; return 1; }
if has sass; then
    for f in "$BUILD"/codeobjects/sm_90a/decode/mla_decode_wg_*.cubin; do
        cuobjdump -sass "$f" >"$OUT/sass_$(basename "$f" .cubin).txt" 2>&1
        echo "$(basename "$f"): HGMMA $(grep -c HGMMA "$OUT/sass_$(basename "$f" .cubin).txt")" \
             "LDL/STL $(grep -cE 'LDL|STL' "$OUT/sass_$(basename "$f" .cubin).txt")"
    done
fi
if has test; then
    timeout ${TEST_TIMEOUT:-400} "$BUILD/tests/gpu/gpu_decode_test" ${QUICK:+--quick} >"$OUT/gpu_test.log" 2>&1 || rc=1
    grep -E "FAIL|NOT COVERED" "$OUT/gpu_test.log" | head -20
    tail -1 "$OUT/gpu_test.log"
fi
if has sanitizer; then
    for a in "--heads 16" "--heads 32" "--heads 128 --qlen 2 --page-size 16" "--dtype fp8 --heads 32 --page-size 1" \
             "--dtype bf16 --kv-dtype fp8 --heads 64" "--dtype fp8 --heads 8 --qlen 4" "--dtype fp8 --heads 16" \
             "--dtype bf16 --kv-dtype fp8 --heads 16 --page-size 1" "--dtype fp8 --heads 128 --qlen 3"; do
        timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$T" run --batch 3 --kv-len 300 --iters 1 --check -1 $a \
            >>"$OUT/sanitizer.log" 2>&1 || rc=1
    done
    grep -E "ERROR SUMMARY" "$OUT/sanitizer.log"
fi
if has run; then
    for a in "" "--heads 128" "--dtype fp8" "--qlen 2"; do timeout 120 "$T" run $a >>"$OUT/run.log" 2>&1 || rc=1; done
    grep -E "check:|decode:" "$OUT/run.log"
fi
if has bench; then
    timeout ${BENCH_TIMEOUT:-300} "$T" bench ${BENCH_ARGS:-} >"$OUT/bench.log" 2>&1 || rc=1
    cat "$OUT/bench.log"
fi
exit $rc
