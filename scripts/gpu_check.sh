#!/usr/bin/env bash
# scripts/gpu_check.sh - every GPU check of libmla in one go, for a lent H200 (sm_90a), from the
# repository root with a build tree at $BUILD (default build): the smoke launch through the
# registry, the decode test (every table row vs the CPU reference; QUICK=1 for --quick; and its
# quick set again with the 16-row bf16 kernel's TileLoader forced at pages >= 8), the
# device planner (byte identity vs the host planner, timing), the CUDA graph test, the merge
# kernel, compute-sanitizer memcheck on small grids and synccheck on multi-tile works, the C example,
# the Python GPU tests against a
# float64 torch reference, round-robin context parallel (examples/context_parallel.py: shards on
# one GPU, and over NCCL with two GPUs), and the main job (`mla run`). Logs go to $OUT (default ./gpu-logs);
# the last line is "N passed, N failed". Exit status: nonzero if any check failed. ONLY=REGEX runs
# only the steps whose name matches (e.g. ONLY=tileloader).
set -u
BUILD=${BUILD:-build}
OUT=${OUT:-gpu-logs}
mkdir -p "$OUT"
export MLA_CODEOBJECT_DIR="$PWD/$BUILD/codeobjects"
export LD_LIBRARY_PATH="$PWD/$BUILD/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
T="$BUILD/tools/mla/mla"
passed=0
failed=0
step() {  # step NAME TIMEOUT COMMAND...: runs, logs to $OUT/NAME.log, prints one line
    local name=$1 limit=$2
    shift 2
    if [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]]; then return 0; fi
    local t0=$SECONDS
    timeout "$limit" "$@" </dev/null >"$OUT/$name.log" 2>&1
    local rc=$?
    if [ $rc -eq 0 ]; then passed=$((passed + 1)); s=PASS; else failed=$((failed + 1)); s="FAIL(rc=$rc)"; fi
    echo "$s $name ($((SECONDS - t0)) s): $(tail -1 "$OUT/$name.log" | cut -c1-150)"
    return $rc
}
nvidia-smi -L 2>&1 | head -1
step smoke 30 "$BUILD/tests/core/test_gpu_smoke"
step decode_test 240 "$BUILD/tests/gpu/gpu_decode_test" ${QUICK:+--quick}
# The 16-row bf16 kernel's TileLoader (cp.async, 4 threads a token) at pages of 8 tokens and more:
# the shipped table gives those rows a tensor map (launch_kv_tma 2), so that loader runs there only
# where the driver cannot encode one (no cuTensorMapEncodeTiled). A copy of the code objects whose
# table says launch_kv_tma 0 on the 16-row bf16 rows forces it: the decode test's quick set and a
# memcheck run under that copy (session 37).
# (the copy, variant_bench.sh's table variant, in a temporary folder removed at exit; the prep is
# a step of its own, run whenever ONLY selects any of the three, which fails when the table has no
# such rows or column: the two runs are then skipped and the failed prep makes the exit status
# nonzero)
CPD=$(mktemp -d) || exit 1
trap 'rm -rf "$CPD"' EXIT
CPL="$CPD/codeobjects"
tl_selected() {
    [ -z "${ONLY:-}" ] && return 0
    local n
    for n in m16_tileloader_table decode_test_m16_tileloader sanitizer_m16_tileloader; do [[ $n =~ $ONLY ]] && return 0; done
    return 1
}
if tl_selected && ONLY='' step m16_tileloader_table 30 env BUILD="$BUILD" VARIANT_DIR="$CPD" \
    "$(dirname "$0")/variant_bench.sh" table m16_tileloader decode/mla_decode.csv launch_kv_tma 0 '^mla_decode_wg_bf16_bf16_m16'; then
    step decode_test_m16_tileloader 240 env MLA_CODEOBJECT_DIR="$CPL" "$BUILD/tests/gpu/gpu_decode_test" --quick
    step sanitizer_m16_tileloader 120 env MLA_CODEOBJECT_DIR="$CPL" compute-sanitizer --tool memcheck --error-exitcode 9 \
        "$T" run --batch 5 --kv-len 300 --heads 16 --page-size 16 --long-first 30 --fused-reduce --iters 1 --check -1
fi
step plan_device 120 env MLA_GPU_PLAN_SWEEP=${PLAN_SWEEP:-100} "$BUILD/tests/planner/test_gpu_plan"
step graph 120 "$BUILD/tests/planner/test_gpu_graph"
step merge 60 "$BUILD/tests/cp/test_gpu_merge"
step sanitizer_merge 120 compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tests/cp/test_gpu_merge"
# memcheck over every decode kernel and both reducers (the list: scripts/sanitizer_runs.txt)
while read -r a; do
    case "$a" in ''|'#'*) continue ;; esac
    # shellcheck disable=SC2086  # ARGS split into the tool's flags
    step "sanitizer_run_$(echo "$a" | tr -c 'a-z0-9' _)" 120 compute-sanitizer --tool memcheck \
        --error-exitcode 9 "$T" run $a --iters 1 --check -1
done < "$(dirname "$0")/sanitizer_runs.txt"
# synccheck (barrier misuse) on works of many tiles: the named barriers between the warpgroups of
# the 16-row (MLA_WG_DEC) and qm TMA bodies run only from a work's third tile on (session 11), the
# qm fp8 body's from its fifth (session 20). --num-cuda-barriers 64: with the tool's default the
# qm fp8 body's run overflowed its table of tracked mbarriers ("Detected overflow of tracked
# cuda::barrier structures") and the kernel failed under the tool; with 64, 0 errors (session 20
# call 6)
step synccheck_16rows 120 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 "$T" run --batch 40 --kv-len 2000 \
    --iters 1 --check -1
step synccheck_16rows_page1 120 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 "$T" run --batch 40 --kv-len 2000 \
    --page-size 1 --iters 1 --check -1
step synccheck_64heads 120 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 "$T" run --batch 4 --kv-len 16384 \
    --heads 64 --iters 1 --check 2
step synccheck_64heads_fp8 120 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 "$T" run --batch 4 --kv-len 16384 \
    --heads 64 --dtype fp8 --iters 1 --check 2
step example_c 60 "$BUILD/examples/decode_example"
if python3 -c "import torch" 2>/dev/null; then
    step python_gpu 240 env LIBMLA_PATH="$PWD/$BUILD/src/libmla.so.0" PYTHONPATH="$PWD/bindings/python" \
        python3 -m pytest -q -p no:cacheprovider tests/python -m gpu
    # round-robin context parallel (issue 9): W = 2 shards on one GPU, then over NCCL when there
    # are two GPUs (docs/context-parallel.md; the full sweep: examples/context_parallel.py --check)
    step cp_simulate 600 env LIBMLA_PATH="$PWD/$BUILD/src/libmla.so.0" \
        python3 examples/context_parallel.py --check --simulate 2 --s-k 1,3,4097 --qlen 1,4
    if [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then
        step cp_nccl 900 env LIBMLA_PATH="$PWD/$BUILD/src/libmla.so.0" \
            python3 examples/context_parallel.py --check --world-size 2 --s-k 1,3,4097 --qlen 1,4
    fi
fi
step run_default 120 "$T" run
step run_h128 120 "$T" run --heads 128
step run_fp8 120 "$T" run --dtype fp8
[ -n "${ONLY:-}" ] || grep -hE "check:|decode:|copy" "$OUT"/run_*.log | head -20
echo "$passed passed, $failed failed"
[ $((passed + failed)) -gt 0 ] || echo "gpu_check: no step matches ONLY=${ONLY:-}"
[ "$failed" -eq 0 ] && [ $((passed + failed)) -gt 0 ]  # (an ONLY that matches no step fails)
