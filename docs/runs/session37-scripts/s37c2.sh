# session 37 call 2 (placement only, nothing ships): (a) the seesaw qm body's chain alone, to decide
# whether its loads or its chain keep it behind the shipped body: ssa (seesaw, -DMLA_QMT_ABLATE=2,
# 0b072298), sssa (seesaw with S1 staggered behind S0, -DMLA_QM_SS_STAGGER=1 -DMLA_QMT_ABLATE=2,
# 579f0208), sss (staggered, with loads, 679697af) against the shipped body's chain alone qmcha
# (-DMLA_QMT_ABLATE=2, a322065e) and the shipped body (t1), all on t1's table (the 3-D map,
# launch_kv_tma 1 on the qm bf16/bf16 rows), at 128 and 64 heads, and 128 heads MTP 2 (t1, qmcha, ssa, sss).
#   each variant: nvcc (the project's flags without -Werror: the seesaw's division slow path takes
#   a 16-byte stack frame) -DMLA_QM_SEESAW=1 ... codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu
#   -o build-lead/tests/gpu/s29/NAME/mla_decode_qm_bf16_bf16.cubin; build-var/NAME = build-var/t1
#   with that cubin.
#   carry: build-lead/{src,codeobjects,tools}, build-var/{t1,ssa,sssa,sss,qmcha}
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s37c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; B=build-var
for a in "--heads 128" "--heads 64"; do
  echo "== check sss $a"; MLA_CODEOBJECT_DIR=$B/sss/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done
for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 100 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $B/t1/codeobjects $B/qmcha/codeobjects $B/ssa/codeobjects $B/sssa/codeobjects $B/sss/codeobjects
done
echo "== 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 120 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 $F --iters 20" $B/t1/codeobjects $B/qmcha/codeobjects $B/ssa/codeobjects $B/sss/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
