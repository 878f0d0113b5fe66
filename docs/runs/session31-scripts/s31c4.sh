# session 31 call 4 (not run in session 31: no machine; the next session's first call): the full
# gpu_check on the shipped cubins (145319d's SASS) with the decode test's no_split_tiles cases made
# small (call 3's ran out of time); then the late trigger in the qm and register-A bodies (lt31:
# -DMLA_QM_RA_LATE_TRIG=1) on split plans (varied lengths, where the reducer runs). Build, from the
# repository root after `ninja -C build-lead`:
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B lt31 "-DMLA_QM_RA_LATE_TRIG=1" $D/mla_decode_qm_bf16_bf16.cu $D/mla_decode_qm_fp8_fp8.cu \
#      $D/mla_decode_ra_bf16_fp8.cu $D/mla_decode_ra_fp8_fp8.cu
#   (SASS 8a370603, 669e728c, 941cd0d9, 5cf64bc5; no spill)
#   cp docs/runs/session31-scripts/s31c4.sh build-lead/tests/gpu/s31c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
bash docs/runs/session29-scripts/build_variants.sh assemble lt31
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29; T=build-lead/tools/mla/mla
echo "== 64 heads varied: shipped vs lt31"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 64 --varlen --iters 30" $L $S/lt31/codeobjects
echo "== 128 heads varied"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 128 --varlen --iters 20" $L $S/lt31/codeobjects
echo "== fp8 128 heads varied"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 128 --dtype fp8 --varlen --iters 20" $L $S/lt31/codeobjects
echo "== fp8 16 heads varied"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --dtype fp8 --varlen --iters 30" $L $S/lt31/codeobjects
echo "== bf16 Q / fp8 KV 16 heads varied"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 --varlen --iters 30" $L $S/lt31/codeobjects
for a in "--heads 128" "--heads 128 --dtype fp8" "--dtype fp8" "--dtype bf16 --kv-dtype fp8"; do
    echo "== check lt31: $a"; MLA_CODEOBJECT_DIR=$S/lt31/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "plan:|check|decode:"
done
echo done
