# session 35 call 3: MLA_WG_CP8's loader at page size 1 only (c8p1, MLA_WG_CP8_MAX_LOG2 0) and at
# every page size below 8 (c8p4, = call 2's c8 with the page-size test) against the set at pages 1,
# 2, 4; checks; c8p1 on the TMA rows, then the full gpu_check with c8p1's cubin in place.
#   cp docs/runs/session35-scripts/s35c3.sh build-lead/tests/gpu/s35c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s35c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble c8p1 c8p4
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for v in c8p1 c8p4; do for ps in 1 2 4; do chk $v "--batch 24 --kv-len 3000 --varlen --page-size $ps"; done; done
for ps in 1 2 4; do
  echo "== page $ps ($SECONDS s)"; ROUNDS=2 timeout 45 $V run "--batch 128 --kv-len 4096 --page-size $ps $F --iters 20" $L $S/c8p1/codeobjects $S/c8p4/codeobjects
done
left 150; echo "== main job ($SECONDS s)"; ROUNDS=2 timeout 25 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/c8p1/codeobjects
left 170; echo "== b 64 ($SECONDS s)"; ROUNDS=2 timeout 20 $V run "--batch 64 --kv-len 1024 $F --iters 50" $L $S/c8p1/codeobjects
left 200; echo "== gpu_check with c8p1's cubin ($SECONDS s)"
cp build-lead/tests/gpu/s29/c8p1/mla_decode_wg_bf16_bf16.cubin build-lead/codeobjects/sm_90a/decode/
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 280 scripts/gpu_check.sh 2>&1 | tail -44
(cd $O && tar czf gc.tgz gc && rm -rf gc)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
