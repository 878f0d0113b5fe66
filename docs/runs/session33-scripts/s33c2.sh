# session 33 call 2: synccheck's error on pgfl placed; the qm epilogue's staging wait traced three
# ways (qtrL: the last of 2 works a CTA; qtrE1: the LSE stores after the staging barrier; qtrE2:
# output rows and LSE prefetched at the work's start); end to end pgfl, pff (+ fast softmax),
# pfft (+ the touch) against the shipped cubins.
# Build (repository root, after ninja -C build-lead), with call 1's pg, fl, pgfl:
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh; Q=$D/mla_decode_qm_bf16_bf16.cu
#   $B qtrL "-DMLA_WG_TRACE=2 -DMLA_WG_TRACE_LAST=1" $Q; $B qtrE1 "-DMLA_WG_TRACE=2 -DMLA_QM_LSE_LATE=1" $Q
#   $B qtrE2 "-DMLA_WG_TRACE=2 -DMLA_QM_OUT_TOUCH=1" $Q
#   $B pff "-DMLA_QMT_PGFIRST=1 -DMLA_QMT_FENCE_LATE=1 -DMLA_QM_FAST_SOFTMAX=1" $Q
#   $B pfft "-DMLA_QMT_PGFIRST=1 -DMLA_QMT_FENCE_LATE=1 -DMLA_QM_FAST_SOFTMAX=1 -DMLA_QM_OUT_TOUCH=1" $Q
#   cp docs/runs/session33-scripts/s33c2.sh build-lead/tests/gpu/s33c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s33c2.txt) 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble pg fl pgfl pff pfft qtrL qtrE1 qtrE2
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
S=/tmp/s29; T=build-lead/tools/mla/mla; L=$PWD/build-lead/codeobjects
for v in pgfl pg fl ship; do
  d=$S/$v/codeobjects; [ $v = ship ] && d=$L
  echo "== synccheck $v"; MLA_CODEOBJECT_DIR=$d timeout 90 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --heads 64 --page-size 16 --varlen --check -1 --iters 1 2>&1 | grep -v "^  *\(plan\|decode\|bench\|host\)" | head -40
done
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
TR="python3 benchmarks/decode_trace.py --qm --heads 64 --kv-len 4096 --iters 10 --no-split"
echo "== qtrL, b 256 on 128 clusters, the last work"; MLA_CODEOBJECT_DIR=$S/qtrL/codeobjects timeout 60 $TR --batch 256 --clusters 128 --last
echo "== qtrE1"; MLA_CODEOBJECT_DIR=$S/qtrE1/codeobjects timeout 60 $TR --batch 128
echo "== qtrE2"; MLA_CODEOBJECT_DIR=$S/qtrE2/codeobjects timeout 60 $TR --batch 128
for v in pff pfft; do
  for a in "--heads 64" "--heads 128 --qlen 2 --page-size 16" "--heads 64 --page-size 128"; do
    echo "== check $v: $a"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check"
  done
done
V=scripts/variant_bench.sh
echo "== 64 heads fixed"; ROUNDS=3 timeout 100 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $L $S/pgfl/codeobjects $S/pff/codeobjects $S/pfft/codeobjects
echo "== 128 heads fixed"; ROUNDS=2 timeout 100 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $L $S/pgfl/codeobjects $S/pff/codeobjects $S/pfft/codeobjects
echo "== 128 heads MTP 2 fixed"; ROUNDS=2 timeout 100 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 --fixed --iters 10" $L $S/pgfl/codeobjects $S/pff/codeobjects $S/pfft/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
