# session 33 call 3: the set to ship (the qm epilogue's division hoisted in every qm cubin; the bf16
# qm cubin with MLA_QMT_PGFIRST=1 and MLA_QMT_FENCE_LATE=1): gpu_check, the target table, its trace
# (qtrN), and end to end against a39eb5d's qm cubins (old) and the hoist alone (dv).
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh; Q=$D/mla_decode_qm_bf16_bf16.cu
#   $B dv "-DMLA_QMT_PGFIRST=0 -DMLA_QMT_FENCE_LATE=0" $Q; $B qtrN "-DMLA_WG_TRACE=2" $Q
#   old: git archive a39eb5d codeobjects | tar -x -C /tmp/old, then nvcc (the project's flags) of its three
#   mla_decode_qm_*.cu into build-lead/tests/gpu/s29/old/
#   cp docs/runs/session33-scripts/s33c3.sh build-lead/tests/gpu/s33c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s33c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
bash docs/runs/session29-scripts/build_variants.sh assemble old dv qtrN
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh
echo "== 64 heads fixed"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $S/old/codeobjects $S/dv/codeobjects $L
echo "== 128 heads fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $S/old/codeobjects $S/dv/codeobjects $L
echo "== 128 heads MTP 2 fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 --fixed --iters 10" $S/old/codeobjects $S/dv/codeobjects $L
echo "== fp8 128 heads fixed"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 128 --dtype fp8 --fixed --iters 20" $S/old/codeobjects $L
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
echo "== qtrN --no-split"; MLA_CODEOBJECT_DIR=$S/qtrN/codeobjects timeout 60 python3 benchmarks/decode_trace.py --qm --batch 128 --kv-len 4096 --heads 64 --iters 10 --no-split 2>&1 | head -45
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
