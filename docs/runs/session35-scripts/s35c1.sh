# session 35 call 1: gpu_check on the new set (rq, q8r, qs1 as defaults), the A/Bs against
# session 34's shipped cubins (variant s34), the target table and host cost, then session 34's
# s34c3.sh (page 1 on the other cubins, o33 against the set), each step only while time is left.
#   cp docs/runs/session35-scripts/s35c1.sh build-lead/tests/gpu/s35c1.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s35c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== gpu_check ($SECONDS s)"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=200 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
bash docs/runs/session29-scripts/build_variants.sh assemble s34 o33
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
ab() { echo "== $1 ($SECONDS s)"; ROUNDS=$2 timeout $3 $V run "$4" $L $S/s34/codeobjects; }
left 360; ab "page 1" 2 40 "--batch 128 --kv-len 4096 --page-size 1 $F --iters 20"
left 380; ab "fp8 16 heads" 3 30 "--batch 128 --kv-len 4096 --dtype fp8 $F --iters 30"
left 400; ab "fp8 16 x MTP 2" 3 30 "--batch 128 --kv-len 4096 --dtype fp8 --qlen 2 $F --iters 30"
left 420; ab "main job" 3 30 "--batch 128 --kv-len 4096 $F --iters 30"
left 430; ab "b 1" 3 25 "--batch 1 --kv-len 32768 $F --iters 50"
left 440; ab "b 64" 3 25 "--batch 64 --kv-len 1024 $F --iters 50"
left 450; ab "16 x MTP 2" 3 30 "--batch 128 --kv-len 4096 --qlen 2 $F --iters 30"
left 460; ab "bf16 Q / fp8 KV" 2 25 "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 $F --iters 30"
left 470; echo "== targets ($SECONDS s)"; timeout 100 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; timeout 20 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
left 540; ab "b 1536" 1 40 "--batch 1536 --kv-len 2048 $F --iters 8"
for a in "--heads 64" "--dtype bf16 --kv-dtype fp8" "--dtype fp8" "--dtype fp8 --heads 128" "--heads 128"; do
  left 575; echo "== page 1 o33: $a ($SECONDS s)"; ROUNDS=1 timeout 25 $V run "--batch 128 --kv-len 4096 --page-size 1 $a $F --iters 10" $L $S/o33/codeobjects
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
