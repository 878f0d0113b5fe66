# session 33 call 5: the shipped set (qm cubins = call 3's, 16/32-row and register-A cubins = call 4's;
# every SASS md5 as measured there): the target table, reference checks on split plans, host cost.
#   cp docs/runs/session33-scripts/s33c5.sh build-lead/tests/gpu/s33c5.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s33c5.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
for a in "--heads 64" "--heads 128 --qlen 2 --page-size 16" "--heads 16" "--dtype bf16 --kv-dtype fp8 --heads 16" "--dtype fp8 --heads 128"; do
  echo "== check: $a"; timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check"
done
echo "== host cost, main job fixed"; timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
echo done
