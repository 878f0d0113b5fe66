# session 33 call 1: the qm TMA body's start and epilogue traced at 64 heads with and without the
# reducer and with warm code (qtr = session 32's qtr4 build), the start reordered (qtrpg: trace +
# MLA_QMT_PGFIRST=1), and end to end: pg (MLA_QMT_PGFIRST=1), fl (MLA_QMT_FENCE_LATE=1), pgfl (both),
# fs (MLA_QM_FAST_SOFTMAX=1, lazy) against the shipped cubins, after checks of each variant.
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh; Q=$D/mla_decode_qm_bf16_bf16.cu
#   $B pg "-DMLA_QMT_PGFIRST=1" $Q; $B fl "-DMLA_QMT_FENCE_LATE=1" $Q
#   $B pgfl "-DMLA_QMT_PGFIRST=1 -DMLA_QMT_FENCE_LATE=1" $Q; $B fs "-DMLA_QM_FAST_SOFTMAX=1" $Q
#   $B qtr "-DMLA_WG_TRACE=2" $Q; $B qtrpg "-DMLA_WG_TRACE=2 -DMLA_QMT_PGFIRST=1" $Q
#   cp docs/runs/session33-scripts/s33c1.sh build-lead/tests/gpu/s33c1.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s33c1.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble qtr qtrpg pg fl pgfl fs
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
S=/tmp/s29
TR="python3 benchmarks/decode_trace.py --qm --batch 128 --kv-len 4096 --heads 64 --iters 10"
echo "== qtr, reducer launched"; MLA_CODEOBJECT_DIR=$S/qtr/codeobjects timeout 60 $TR
echo "== qtr --no-split"; MLA_CODEOBJECT_DIR=$S/qtr/codeobjects timeout 60 $TR --no-split
echo "== qtr --no-split --cache warm-code"; MLA_CODEOBJECT_DIR=$S/qtr/codeobjects timeout 60 $TR --no-split --cache warm-code
echo "== qtrpg --no-split"; MLA_CODEOBJECT_DIR=$S/qtrpg/codeobjects timeout 60 $TR --no-split
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
for v in pgfl fs pg fl; do
  for a in "--heads 64" "--heads 128 --qlen 2 --page-size 16" "--heads 64 --page-size 128"; do
    echo "== check $v: $a"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check"
  done
done
echo "== synccheck pgfl"; MLA_CODEOBJECT_DIR=$S/pgfl/codeobjects timeout 60 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --heads 64 --page-size 16 --varlen --check -1 --iters 1 2>&1 | grep -E "check:|ERROR SUMMARY"
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects
echo "== 64 heads fixed"; ROUNDS=3 timeout 100 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $L $S/pg/codeobjects $S/fl/codeobjects $S/pgfl/codeobjects $S/fs/codeobjects
echo "== 128 heads fixed"; ROUNDS=2 timeout 100 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $L $S/pg/codeobjects $S/fl/codeobjects $S/pgfl/codeobjects $S/fs/codeobjects
echo "== 128 heads MTP 2 fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 --fixed --iters 10" $L $S/pgfl/codeobjects $S/fs/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
