# session 32 call 7: where a tile's time goes in the qm TMA body at 64 heads (b 128, s_k 4096): its
# in-tile stamps (MLA_WG_TRACE=2, decode_qm_tma.cuh; qtr), and the same without KV loads (qtr2:
# -DMLA_QMT_ABLATE=2, the chain alone). Results of these builds are wrong by design (timing only).
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B qtr "-DMLA_WG_TRACE=2" $D/mla_decode_qm_bf16_bf16.cu
#   $B qtr2 "-DMLA_WG_TRACE=2 -DMLA_QMT_ABLATE=2" $D/mla_decode_qm_bf16_bf16.cu
#   cp docs/runs/session32-scripts/s32c7.sh build-lead/tests/gpu/s32c7.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c7.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble qtr qtr2
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
for v in qtr qtr2; do
  echo "== $v: b 128, s_k 4096, 64 heads"
  MLA_CODEOBJECT_DIR=/tmp/s29/$v/codeobjects timeout 90 python3 benchmarks/decode_trace.py --qm --batch 128 --kv-len 4096 --heads 64 --iters 10
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
