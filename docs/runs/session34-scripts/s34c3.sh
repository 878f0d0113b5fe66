# session 34 call 3: the set to ship (its SASS md5s in docs/performance.md, "Prediction for the third
# call"): the full gpu_check (memcheck over every decode kernel, synccheck, the float64 torch
# tests), the target table, the host cost.
#   cp docs/runs/session34-scripts/s34c3.sh build-lead/tests/gpu/s34c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s34c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; for i in 1 2; do timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"; done
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=600 timeout 400 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
