# session 33 call 4: the set to ship (call 3's plus store_rows_part's rows stepped, for_rows_chunk):
# gpu_check, the target table, the host cost, its qm trace (qtrS), and end to end against the third
# call's decode cubins (c3).
# Build (repository root, after ninja -C build-lead):
#   c3: git archive ed47bee codeobjects | tar -x -C /tmp/c3, then nvcc (the project's flags) of its eight
#   mla_decode_{qm,wg,ra}_*.cu into build-lead/tests/gpu/s29/c3/
#   docs/runs/session29-scripts/build_variants.sh qtrS "-DMLA_WG_TRACE=2" codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu
#   cp docs/runs/session33-scripts/s33c4.sh build-lead/tests/gpu/s33c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s33c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; for i in 1 2; do timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"; done
bash docs/runs/session29-scripts/build_variants.sh assemble c3 qtrS
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh
echo "== main job fixed"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $S/c3/codeobjects $L
echo "== 64 heads fixed"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $S/c3/codeobjects $L
echo "== 128 heads fixed"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $S/c3/codeobjects $L
echo "== b 64 s_k 1024"; ROUNDS=3 timeout 40 $V run "--batch 64 --kv-len 1024 --fixed --iters 50" $S/c3/codeobjects $L
echo "== b 1536 s_k 2048"; ROUNDS=2 timeout 60 $V run "--batch 1536 --kv-len 2048 --fixed --iters 10" $S/c3/codeobjects $L
echo "== bf16 Q / fp8 KV"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 --fixed --iters 30" $S/c3/codeobjects $L
export LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python
echo "== qtrS --no-split"; MLA_CODEOBJECT_DIR=$S/qtrS/codeobjects timeout 60 python3 benchmarks/decode_trace.py --qm --batch 128 --kv-len 4096 --heads 64 --iters 10 --no-split 2>&1 | head -36
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
