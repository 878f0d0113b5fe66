# session 32 call 3: the full gpu_check on the set to ship (the late trigger on in the bf16 qm and
# bf16 Q / fp8 KV register-A cubins: SASS 8a370603, 941cd0d9), the target table, the host cost of
# the one-launch (unsplit) main job, and an A/B against those two cubins with the trigger off
# (off32: session 31's 73149778, 8bee98d2). Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B off32 "-DMLA_QM_RA_LATE_TRIG=0" $D/mla_decode_qm_bf16_bf16.cu $D/mla_decode_ra_bf16_fp8.cu
#   cp docs/runs/session32-scripts/s32c3.sh build-lead/tests/gpu/s32c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (unsplit: one launch)"
for i in 1 2 3; do timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "plan:|host cost"; done
echo "== host cost, main job varied (split: two launches)"; timeout 30 $T run --check 0 --iters 20 2>&1 | grep -E "plan:|host cost"
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 360 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
bash docs/runs/session29-scripts/build_variants.sh assemble off32
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== 128 heads varied: shipped(new) vs off32"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 128 --varlen --iters 20" $L $S/off32/codeobjects
echo "== 64 heads varied"; ROUNDS=2 timeout 30 $V run "--batch 128 --kv-len 4096 --heads 64 --varlen --iters 30" $L $S/off32/codeobjects
echo "== bf16 Q / fp8 KV varied"; ROUNDS=2 timeout 30 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 --varlen --iters 30" $L $S/off32/codeobjects
echo done
