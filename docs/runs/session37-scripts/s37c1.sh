# session 37 call 1: (a) session 36's prepared fifth call (s36c5.sh): the seesaw qm body (ss1) against
# the shipped body on the same 3-D map (t1) at 128 and 64 heads; (b) the cp8 copies through issue_pf
# (fold, -DMLA_WG_CP8_FOLD=1, SASS 0af3f99f) against the shipped wg bf16/bf16 cubin (564ea36e) at
# pages 1, 2, 4 and the main job; (c) the new gpu_check steps that force the 16-row bf16 kernel's
# TileLoader at pages >= 8 (ONLY=tileloader). Nothing ships from this call.
#   seesaw, t1, ss1: as in docs/runs/session36-scripts/s36c5.sh's header (10fb8732)
#   bash docs/runs/session29-scripts/build_variants.sh fold "-DMLA_WG_CP8_FOLD=1" codeobjects/sm_90a/decode/mla_decode_wg_bf16_bf16.cu
#   carry: build-lead/{src,codeobjects,tools,tests/gpu}, build-var/t1, build-var/ss1
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s37c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; L=$PWD/build-lead/codeobjects
bash docs/runs/session29-scripts/build_variants.sh assemble fold
S=/tmp/s29
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$3 timeout 30 $T run $2 --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; }
for a in "--heads 128" "--heads 64" "--heads 128 --qlen 2"; do
  chk ss1 "--batch 24 --kv-len 3000 --varlen $a" build-var/ss1/codeobjects
done
for a in "--page-size 1" "--page-size 2" "--page-size 4" "--page-size 1 --fused-reduce"; do
  chk fold "--batch 24 --kv-len 3000 --varlen $a" $S/fold/codeobjects
done
for h in 128 64; do
  echo "== seesaw $h heads ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $L build-var/t1/codeobjects build-var/ss1/codeobjects
done
for ps in 1 2 4; do
  echo "== fold page $ps ($SECONDS s)"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --page-size $ps $F --iters 20" $L $S/fold/codeobjects
done
echo "== fold main job ($SECONDS s)"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/fold/codeobjects
echo "== gpu_check ONLY=tileloader ($SECONDS s)"
BUILD=build-lead OUT=$O/gc ONLY=tileloader timeout 200 scripts/gpu_check.sh 2>&1 | tail -4
tail -2 $O/gc/decode_test_m16_tileloader.log
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
