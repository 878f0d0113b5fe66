# session 32 call 8: the qm TMA body's start and epilogue, stamped (qtr4: MLA_WG_TRACE=2 with the
# epilogue's stamps 27 / 25), the same with the KV tensor map prefetched at kernel entry (qtr5:
# + MLA_TMAP_PREFETCH=1), and the prefetch's effect end to end (tp: MLA_TMAP_PREFETCH=1 in the bf16
# qm and 16/32-row TMA cubins) against the shipped cubins. Trace builds: wrong results by design.
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B qtr4 "-DMLA_WG_TRACE=2" $D/mla_decode_qm_bf16_bf16.cu
#   $B qtr5 "-DMLA_WG_TRACE=2 -DMLA_TMAP_PREFETCH=1" $D/mla_decode_qm_bf16_bf16.cu
#   $B tp "-DMLA_TMAP_PREFETCH=1" $D/mla_decode_qm_bf16_bf16.cu $D/mla_decode_wg_bf16_bf16.cu
#   cp docs/runs/session32-scripts/s32c8.sh build-lead/tests/gpu/s32c8.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c8.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble qtr4 qtr5 tp
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
for v in qtr4 qtr5; do
  echo "== $v: b 128, s_k 4096, 64 heads"
  MLA_CODEOBJECT_DIR=/tmp/s29/$v/codeobjects timeout 60 python3 benchmarks/decode_trace.py --qm --batch 128 --kv-len 4096 --heads 64 --iters 10 | head -38
done
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
echo "== 64 heads fixed: shipped vs tp"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $L $S/tp/codeobjects
echo "== main job fixed"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $S/tp/codeobjects
echo "== b 1, s_k 32768"; ROUNDS=3 timeout 30 $V run "--batch 1 --kv-len 32768 --fixed --iters 50" $L $S/tp/codeobjects
echo "== b 64, s_k 1024"; ROUNDS=3 timeout 30 $V run "--batch 64 --kv-len 1024 --fixed --iters 50" $L $S/tp/codeobjects
echo done
