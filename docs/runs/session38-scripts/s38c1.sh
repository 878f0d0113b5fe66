# session 38 call 1 (prepared at the end of session 37; nothing ships from it): (a) gpu_check's 46
# steps on the shipped cubins (the script as revised after session 37's review: the TileLoader
# table copy as a step of its own, never run on a device); (b) which of three suspects lengthens
# the seesaw's order-1 chain (254.1 µs at 128 heads against order 0's 229.8, session 37 call 3):
# chains alone (-DMLA_QMT_ABLATE=2), all staggered, order 1 with one hook each:
#   s38lz0a  -DMLA_QM_SS_LAZYMAX=0   (the exact max, as order 0)               ff777e0d
#   s38p0la  -DMLA_QM_SS_P0LATE=1    (SC0 before P0's store, P0 under kSsP0)   962e4f0a
#   s38p1ra  -DMLA_QM_SS_P1RELOAD=1  (no P1 fragments across P0 V0_R)          fc2d9428
# against qmcha (the shipped body's chain, a322065e), sssa (order 0, 579f0208), ssbsa (order 1,
# 3d5995ca), and with loads t1 (the shipped body), sss (679697af), ssbs (9c1a3715); (c) synccheck
# on sss at session 17's shape (b 3, s_k 700, 128 heads) with and without --num-cuda-barriers 64.
#   builds (build machine, session 37's tree): nvcc -gencode=arch=compute_90a,code=sm_90a --cubin
#   -O3 -std=c++17 -lineinfo -Xptxas=-warn-spills,-warn-lmem-usage -I codeobjects/sm_90a
#   -DMLA_QM_SEESAW=1 -DMLA_QM_SS_STAGGER=1 -DMLA_QM_SS_ORDER=1 HOOK -DMLA_QMT_ABLATE=2
#   codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu -o build-var/s38c/NAME/mla_decode_qm_bf16_bf16.cubin
#   (the others: session 37's, copied from build-lead/tests/gpu/s29/NAME); build-var/s38c/mla_decode_t1.csv
#   = session 37's t1 table (launch_kv_tma 1 on the qm bf16/bf16 rows)
#   and build-var/s38c/gpu_decode_test = build-lead/tests/gpu/gpu_decode_test (the carry's 8 paths:
#   build-lead/tests/gpu with its s29 variants would pass 64 MB)
#   carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,examples}, build-var/s38c
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s38c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; S=/tmp/s38
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
mkdir -p build-lead/tests/gpu && cp build-var/s38c/gpu_decode_test build-lead/tests/gpu/
for n in t1 qmcha sssa ssbsa sss ssbs s38lz0a s38p0la s38p1ra; do  # each = build-lead's code objects, t1's table, NAME's cubin
  rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects
  cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv
  [ -d build-var/s38c/$n ] && cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/
done
echo "== gpu_check ($SECONDS s)"
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 300 scripts/gpu_check.sh 2>&1 | tail -48
(cd $O && tar czf gc.tgz gc && rm -rf gc)
left 400; for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 110 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $S/qmcha/codeobjects $S/sssa/codeobjects $S/ssbsa/codeobjects $S/s38lz0a/codeobjects $S/s38p0la/codeobjects $S/s38p1ra/codeobjects $S/t1/codeobjects $S/sss/codeobjects $S/ssbs/codeobjects
done
for nb in "" "--num-cuda-barriers 64"; do
  echo "== synccheck sss, session 17's shape [$nb] ($SECONDS s)"; MLA_CODEOBJECT_DIR=$S/sss/codeobjects timeout 60 compute-sanitizer --tool synccheck $nb --error-exitcode 9 $T run --batch 3 --kv-len 700 --heads 128 --iters 1 --check -1 > $O/synccheck_sss_s17${nb:+_nb64}.log 2>&1; echo "rc $?"; tail -4 $O/synccheck_sss_s17${nb:+_nb64}.log
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
