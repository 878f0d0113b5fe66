# session 35's prepared fourth call (not run: no device time left; for session 36 after its
# gpu_check): does the softmax's proxy fence (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S before P^T's
# barrier) wait for the MMA warpgroup's own outstanding cp.async copies of the next tile?
#   c8f0   = c8p4 with that fence dropped (MLA_WG_ABLATE=256: a timing hook, its results may race)
#   c8w1   = the set (c8p1) with the copies issued by warpgroup 1 alone (MLA_WG_CP8_WG1=1)
#   c8w1p4 = c8w1 at every page size below 8 (MLA_WG_CP8_MAX_LOG2=2)
# against c8p4 and the set at pages 1, 2, 4, the main job as the control (TMA: no copies outstanding).
#   cp docs/runs/session35-scripts/s35c4.sh build-lead/tests/gpu/s35c4.sh
# the variants first (build machine), each md5 as in performance.md session 35:
#   D=codeobjects/sm_90a/decode B=docs/runs/session29-scripts/build_variants.sh
#   bash $B c8p4 "-DMLA_WG_CP8_MAX_LOG2=2" $D/mla_decode_wg_bf16_bf16.cu                       # 791e0518
#   bash $B c8f0 "-DMLA_WG_CP8_MAX_LOG2=2 -DMLA_WG_ABLATE=256" $D/mla_decode_wg_bf16_bf16.cu   # ffa81b49
#   bash $B c8w1 "-DMLA_WG_CP8_WG1=1" $D/mla_decode_wg_bf16_bf16.cu                            # 17e3030f
#   bash $B c8w1p4 "-DMLA_WG_CP8_WG1=1 -DMLA_WG_CP8_MAX_LOG2=2" $D/mla_decode_wg_bf16_bf16.cu  # 1f24bc11
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s35c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble c8p4 c8f0 c8w1 c8w1p4
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for v in c8w1 c8w1p4; do
  for a in "--batch 24 --kv-len 3000 --varlen --page-size 1" "--batch 24 --kv-len 3000 --varlen --page-size 2" \
           "--batch 40 --kv-len 2000 --varlen --page-size 1 --fused-reduce" "--batch 7 --kv-len 65 --varlen --page-size 4"; do
    chk $v "$a"
  done
done
for ps in 1 2 4; do
  echo "== page $ps ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --page-size $ps $F --iters 20" $L $S/c8p4/codeobjects $S/c8f0/codeobjects $S/c8w1/codeobjects $S/c8w1p4/codeobjects
done
echo "== main job ($SECONDS s)"; ROUNDS=2 timeout 30 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/c8f0/codeobjects $S/c8w1/codeobjects
echo "done ($SECONDS s)"
