# session 36 call 2: (a) c8dq = the shipped wg bf16/bf16 cubin (c8p4, 791e0518) with the tile-row
# division by one reciprocal at every site (MLA_DIV_RCP_SITES 63: session 34's dq, which cost the
# old TileLoader ring 36 µs at page 1; the ring's code is cp8's now), against the set on the
# 16-row rows; (b) page 1 placed: the set without the MMA warpgroup's work (p1ld, MLA_WG_ABLATE=4:
# the loads alone) and without the softmax (p1ns, 128); both timing only.
# Rule fixed before the call: c8dq ships (gpu_check here, then the target table) if its page-1
# median is at most the set's + 0.3 µs, page 2 at most + 0.5, b 1536 not above the set's, and its
# medians of main, b 64, 16 x MTP 2 and b 1 sum at least 0.5 µs below the set's.
#   D=codeobjects/sm_90a/decode B=docs/runs/session29-scripts/build_variants.sh
#   bash $B c8dq "-DMLA_DIV_RCP_SITES=63" $D/mla_decode_wg_bf16_bf16.cu   # 564ea36e
#   bash $B p1ld "-DMLA_WG_ABLATE=4" $D/mla_decode_wg_bf16_bf16.cu        # 5841dad2
#   bash $B p1ns "-DMLA_WG_ABLATE=128" $D/mla_decode_wg_bf16_bf16.cu      # f403b95f
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s36c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble c8dq p1ld p1ns
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for a in "--batch 24 --kv-len 3000 --varlen --page-size 1" "--batch 24 --kv-len 3000 --varlen --page-size 2" \
         "--batch 24 --kv-len 3000 --varlen" "--batch 24 --kv-len 3000 --varlen --qlen 2" \
         "--batch 24 --kv-len 3000 --varlen --heads 20 --qlen 3" "--batch 40 --kv-len 2000 --varlen --fused-reduce" \
         "--batch 40 --kv-len 2000 --varlen --page-size 1 --fused-reduce"; do chk c8dq "$a"; done
rec() { while IFS= read -r line; do echo "$line"
    case "$line" in *" median "*) set -- "$1" $line; d=$2; x=$4
      n=set; for v in c8dq p1ld p1ns; do [ "$d" = "$S/$v/codeobjects" ] && n=$v; done
      echo "$1 $n $x" >> $O/medians.txt;; esac
  done; }
: > $O/medians.txt
ab() { echo "== $1 ($SECONDS s)"; ROUNDS=$2 timeout $3 $V run "$4" $L "${@:5}" | rec "$1"; }
ab p1 2 60 "--batch 128 --kv-len 4096 --page-size 1 $F --iters 20" $S/c8dq/codeobjects $S/p1ld/codeobjects $S/p1ns/codeobjects
ab p2 2 30 "--batch 128 --kv-len 4096 --page-size 2 $F --iters 20" $S/c8dq/codeobjects
ab main 3 40 "--batch 128 --kv-len 4096 $F --iters 30" $S/c8dq/codeobjects
ab b64 3 30 "--batch 64 --kv-len 1024 $F --iters 50" $S/c8dq/codeobjects
ab mtp2 3 40 "--batch 128 --kv-len 4096 --qlen 2 $F --iters 30" $S/c8dq/codeobjects
ab b1 3 30 "--batch 1 --kv-len 32768 $F --iters 50" $S/c8dq/codeobjects
ab b1536 2 60 "--batch 1536 --kv-len 2048 $F --iters 8" $S/c8dq/codeobjects
ship=$(awk '{m[$1" "$2]=$3} END {
  ok = m["p1 c8dq"]!="" && m["p1 c8dq"] <= m["p1 set"]+0.3 && m["p2 c8dq"]!="" && m["p2 c8dq"] <= m["p2 set"]+0.5 \
       && m["b1536 c8dq"]!="" && m["b1536 c8dq"] <= m["b1536 set"];
  a=0; b=0; n=split("main b64 mtp2 b1", r, " ");
  for (i=1;i<=n;i++) { if (m[r[i]" c8dq"]=="") ok=0; a+=m[r[i]" set"]; b+=m[r[i]" c8dq"] }
  print (ok && b <= a-0.5) ? "c8dq" : "set" }' $O/medians.txt)
echo "== rule: $ship ($SECONDS s)"; cat $O/medians.txt
if [ "$ship" = c8dq ]; then
  cp build-lead/tests/gpu/s29/c8dq/mla_decode_wg_bf16_bf16.cubin build-lead/codeobjects/sm_90a/decode/
  left 330; echo "== gpu_check on c8dq ($SECONDS s)"
  BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 250 scripts/gpu_check.sh 2>&1 | tail -46
  (cd $O && tar czf gc.tgz gc && rm -rf gc)
  left 480; echo "== targets on c8dq ($SECONDS s)"; timeout 100 $T bench --targets 2>&1 | tee $O/targets.txt
else
  left 520; echo "== s_k 16384, no ship ($SECONDS s)"
  ab sk16k 2 40 "--batch 128 --kv-len 16384 $F --iters 10" $S/c8dq/codeobjects
fi
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
