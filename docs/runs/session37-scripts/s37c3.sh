# session 37 call 3 (placement; nothing ships): the seesaw with warpgroup 1 taking P0 first
# (-DMLA_QM_SS_ORDER=1, decode_qm_ss.cuh: slot 0's late blocks refilled after P0 V0_R instead of at
# the pair's end): ssbs (staggered, 9c1a3715), ssb (not staggered, fd30320c), ssbsa (staggered,
# chain alone -DMLA_QMT_ABLATE=2, 3d5995ca) against call 2's sss / sssa (order 0 staggered, with
# loads / chain alone), qmcha (the shipped body's chain alone) and t1 (the shipped body, 3-D map).
#   each: nvcc -gencode=arch=compute_90a,code=sm_90a --cubin -O3 -std=c++17 -lineinfo
#   -Xptxas=-warn-spills,-warn-lmem-usage -I codeobjects/sm_90a -DMLA_QM_SEESAW=1 FLAGS
#   codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu -o build-lead/tests/gpu/s29/NAME/...cubin;
#   build-var/NAME = build-var/t1 with that cubin
#   carry: build-lead/{src,codeobjects,tools}, build-var/s37 (= build-var/{t1,qmcha,sss,sssa,ssbs,ssb,ssbsa})
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s37c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; B=build-var/s37
for v in ssbs ssb; do
  for a in "--heads 128" "--heads 64" "--heads 128 --qlen 2" "--heads 64 --page-size 16" "--heads 128 --long-first 9"; do
    echo "== check $v $a"; MLA_CODEOBJECT_DIR=$B/$v/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
  done
done
echo "== synccheck ssbs"; MLA_CODEOBJECT_DIR=$B/ssbs/codeobjects timeout 90 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run --batch 4 --kv-len 16384 --heads 64 --iters 1 --check 2 2>&1 | tail -2
echo "== memcheck ssbs"; MLA_CODEOBJECT_DIR=$B/ssbs/codeobjects timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 $T run --batch 3 --kv-len 300 --heads 128 --qlen 2 --page-size 16 --iters 1 --check -1 2>&1 | tail -2
for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 120 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $B/t1/codeobjects $B/qmcha/codeobjects $B/sssa/codeobjects $B/ssbsa/codeobjects $B/sss/codeobjects $B/ssbs/codeobjects $B/ssb/codeobjects
done
echo "== 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 120 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 $F --iters 20" $B/t1/codeobjects $B/sss/codeobjects $B/ssbs/codeobjects $B/ssb/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
