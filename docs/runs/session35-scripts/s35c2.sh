# session 35 call 2: the 16-row bf16 kernel's cp.async ring (page sizes below 8) with two tiles in
# flight (ce: MLA_WG_CPEARLY), 8 threads a 128-byte line (c8: MLA_WG_CP8), both (cec8), both with
# the page-table L2 prefetch (all3); checks at pages 1, 2, 4 (varied lengths, fused), the page-1 A/B,
# then the fastest variant (if 2 µs or more below the set) on the TMA rows and through the full
# gpu_check with its cubin in place.
#   cp docs/runs/session35-scripts/s35c2.sh build-lead/tests/gpu/s35c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s35c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
VS="ce c8 cec8 all3"
bash docs/runs/session29-scripts/build_variants.sh assemble $VS
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for v in $VS; do
  for a in "--batch 24 --kv-len 3000 --varlen --page-size 1" "--batch 24 --kv-len 3000 --varlen --page-size 2" \
           "--batch 40 --kv-len 2000 --varlen --page-size 4 --fused-reduce" "--batch 7 --kv-len 65 --varlen --page-size 1"; do
    chk $v "$a"
  done
done
echo "== page 1 ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "--batch 128 --kv-len 4096 --page-size 1 $F --iters 20" $L $(for v in $VS; do echo $S/$v/codeobjects; done) | tee $O/page1.txt
left 200; echo "== page 4 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --page-size 4 $F --iters 20" $L $(for v in $VS; do echo $S/$v/codeobjects; done)
base=$(grep "^$L " $O/page1.txt | awk '{print $3}')
best=$(grep "^$S/" $O/page1.txt | sort -k3 -n | head -1); win=$(echo "$best" | sed "s@^$S/@@; s@/codeobjects.*@@"); wt=$(echo "$best" | awk '{print $3}')
echo "== base $base, fastest $win $wt"
awk -v b="$base" -v w="$wt" 'BEGIN { exit !(w <= b - 2) }' || { echo "no variant 2 us below the set"; exit 0; }
left 240; echo "== main job ($SECONDS s)"; ROUNDS=3 timeout 30 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/$win/codeobjects
left 270; echo "== b 64 ($SECONDS s)"; ROUNDS=3 timeout 25 $V run "--batch 64 --kv-len 1024 $F --iters 50" $L $S/$win/codeobjects
left 300; echo "== gpu_check with $win's cubin ($SECONDS s)"
cp build-lead/tests/gpu/s29/$win/mla_decode_wg_bf16_bf16.cubin build-lead/codeobjects/sm_90a/decode/
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 280 scripts/gpu_check.sh 2>&1 | tail -44
(cd $O && tar czf gc.tgz gc && rm -rf gc)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
