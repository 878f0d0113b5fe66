# session 32 call 4: where the 64- and 128-head rows' time goes in the shipped qm TMA body (2822833):
# its loads alone (qa1: -DMLA_QMT_ABLATE=1, every MMA skipped; the softmax on stale values and the
# barriers kept) and its chain alone (qa2: -DMLA_QMT_ABLATE=2, no KV loads), against the 16-head
# TMA body's loads alone on the same 604 MB (wa4: -DMLA_WG_ABLATE=4). Results of the ablated builds
# are wrong by design: timing only. Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B qa1 "-DMLA_QMT_ABLATE=1" $D/mla_decode_qm_bf16_bf16.cu
#   $B qa2 "-DMLA_QMT_ABLATE=2" $D/mla_decode_qm_bf16_bf16.cu
#   $B wa4 "-DMLA_WG_ABLATE=4" $D/mla_decode_wg_bf16_bf16.cu
#   cp docs/runs/session32-scripts/s32c4.sh build-lead/tests/gpu/s32c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble qa1 qa2 wa4
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== 64 heads fixed: shipped, loads alone, chain alone"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $L $S/qa1/codeobjects $S/qa2/codeobjects
echo "== 128 heads fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $L $S/qa1/codeobjects $S/qa2/codeobjects
echo "== 16 heads fixed (main job): shipped, loads alone"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $S/wa4/codeobjects
echo done
