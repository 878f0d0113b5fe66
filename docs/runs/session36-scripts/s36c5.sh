# session 36 call 5 (placement only, nothing ships): the seesaw qm body (decode_qm_ss.cuh,
# -DMLA_QM_SEESAW=1: FlashMLA's schedule, both warpgroups computing S of alternate tiles; session
# 17: 369-375 µs at 128 heads against the then body's 336-339) re-timed on today's shared pieces
# (qm_common.cuh: the epilogue's factors once, the division, the stores), against the shipped
# body on the same 3-D map (the seesaw runs only where launch_kv_tma is 1).
#   build (no -Werror: the division's slow-path call takes a 16-byte stack frame at 255 registers):
#   mkdir -p build-lead/tests/gpu/s29/qmss && /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a \
#     --cubin -O3 -std=c++17 -lineinfo -Xptxas=-warn-spills,-warn-lmem-usage -I codeobjects/sm_90a \
#     -DMLA_QM_SEESAW=1 codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu \
#     -o build-lead/tests/gpu/s29/qmss/mla_decode_qm_bf16_bf16.cubin                      # 10fb8732
#   BUILD=build-lead scripts/variant_bench.sh table t1 decode/mla_decode.csv launch_kv_tma 1 mla_decode_qm_bf16_bf16_m64
#   mkdir -p build-var/ss1 && cp -r build-var/t1/codeobjects build-var/ss1/ && \
#     cp build-lead/tests/gpu/s29/qmss/mla_decode_qm_bf16_bf16.cubin build-var/ss1/codeobjects/sm_90a/decode/
#   carry: build-lead/{src,codeobjects,tools}, build-var/t1, build-var/ss1
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s36c5.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; L=$PWD/build-lead/codeobjects
for a in "--heads 128" "--heads 64" "--heads 128 --qlen 2"; do
  echo "== check ss1 $a"; MLA_CODEOBJECT_DIR=build-var/ss1/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done
for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $L build-var/t1/codeobjects build-var/ss1/codeobjects
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
