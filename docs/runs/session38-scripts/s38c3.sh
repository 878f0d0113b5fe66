# session 38 call 3 (placement; nothing ships): (a) Nsight Compute profiles (scripts/ncu_profile.sh,
# the full set with per-instruction stall samples) of one 128-head launch (b 128, s_k 4096, fixed)
# for s3s (order 3 staggered), t1 (the shipped body on the 3-D map), s3sa (order 3's chain alone)
# and sss (order 0 staggered): where the seesaw's warps wait; (b) synccheck of the shipped qm body
# at b 1, s_k 256, 64 heads on the 3-D map (t1's table) and on the page box (the shipped table):
# whether call 2's synccheck failure of the seesaw belongs to the 3-D map's load path.
#   builds: as s38c2.sh's header (s3s d6e32fb9, s3sa 8e881ece, sss 679697af); carry:
#   build-lead/{src,codeobjects,tools}, build-var/s38c
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s38c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; S=/tmp/s38
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
for n in t1 sss s3s s3sa; do
  rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects
  cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv
  [ -d build-var/s38c/$n ] && cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/
done
for nb in "t1 $S/t1/codeobjects" "shipped $PWD/build-lead/codeobjects"; do set -- $nb
  echo "== synccheck qm body, $1 table ($SECONDS s)"; MLA_CODEOBJECT_DIR=$2 timeout 40 compute-sanitizer --tool synccheck --error-exitcode 9 $T run --batch 1 --kv-len 256 --heads 64 --iters 1 --check -1 > $O/synccheck_$1_b1.log 2>&1; echo "rc $?"; tail -3 $O/synccheck_$1_b1.log
done
for v in s3s t1 s3sa sss; do
  left 420; echo "== ncu $v ($SECONDS s)"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects OUT=$O/ncu timeout 150 scripts/ncu_profile.sh $v mla_decode_qm "--batch 128 --kv-len 4096 --heads 128 --fixed"
  rm -f $O/ncu/$v.ncu-rep
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
