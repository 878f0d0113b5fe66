# session 36 call 1: session 35's prepared fourth call (s35c4: c8f0, c8w1, c8w1p4 against c8p4 and the
# set at pages 1, 2, 4, the main job as control), then gpu_check (43 steps, 201 decode cases) on the
# winner's wg bf16/bf16 cubin, then the target table and host cost on it.
# Winner (rule fixed before the call): among the set (c8p1), c8p4, c8w1, c8w1p4 (not c8f0: a timing
# hook), the lowest sum of the page 1, 2, 4 medians whose page-1 median is at most the set's + 0.5
# and whose main-job median is at most the set's + 0.5; the set when none beats it.
#   cp docs/runs/session36-scripts/s36c1.sh build-lead/tests/gpu/s36c1.sh
# variants (build machine; md5s as in performance.md session 35): see s35c4.sh's header
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s36c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble c8p4 c8f0 c8w1 c8w1p4
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for v in c8w1 c8w1p4; do
  for a in "--batch 24 --kv-len 3000 --varlen --page-size 1" "--batch 24 --kv-len 3000 --varlen --page-size 2" \
           "--batch 40 --kv-len 2000 --varlen --page-size 1 --fused-reduce" "--batch 7 --kv-len 65 --varlen --page-size 4"; do
    chk $v "$a"
  done
done
declare -A med
rec() { # $1 key: read "DIR median X us" lines from stdin, keep them, echo them
  while IFS= read -r line; do echo "$line"
    case "$line" in *" median "*) set -- "$1" $line; d=$2; x=$4
      n=set; for v in c8p4 c8f0 c8w1 c8w1p4; do [ "$d" = "$S/$v/codeobjects" ] && n=$v; done
      echo "$1 $n $x" >> $O/medians.txt;; esac
  done; }
: > $O/medians.txt
for ps in 1 2 4; do
  echo "== page $ps ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --page-size $ps $F --iters 20" $L $S/c8p4/codeobjects $S/c8f0/codeobjects $S/c8w1/codeobjects $S/c8w1p4/codeobjects | rec p$ps
done
echo "== main job ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/c8p4/codeobjects $S/c8f0/codeobjects $S/c8w1/codeobjects $S/c8w1p4/codeobjects | rec main
win=$(awk '{m[$1" "$2]=$3} END {
  best="set"; bs=m["p1 set"]+m["p2 set"]+m["p4 set"];
  n=split("c8p4 c8w1 c8w1p4", c, " ");
  for (i=1;i<=n;i++) { v=c[i]; if (m["p1 "v]=="" || m["p2 "v]=="" || m["p4 "v]=="" || m["main "v]=="") continue;
    s=m["p1 "v]+m["p2 "v]+m["p4 "v];
    if (m["p1 "v] <= m["p1 set"]+0.5 && m["main "v] <= m["main set"]+0.5 && s < bs) { best=v; bs=s } }
  print best }' $O/medians.txt)
echo "== winner: $win ($SECONDS s)"; cat $O/medians.txt
[ "$win" = set ] || cp build-lead/tests/gpu/s29/$win/mla_decode_wg_bf16_bf16.cubin build-lead/codeobjects/sm_90a/decode/
echo "== gpu_check on $win ($SECONDS s)"
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 280 scripts/gpu_check.sh 2>&1 | tail -46
(cd $O && tar czf gc.tgz gc && rm -rf gc)
left 470; echo "== targets on $win ($SECONDS s)"; timeout 100 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; timeout 20 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
