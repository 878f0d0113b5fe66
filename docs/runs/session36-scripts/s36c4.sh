# session 36 call 4 (placement only, nothing ships): the qm bf16 TMA body's chain alone (qmch,
# MLA_QMT_ABLATE=2: no KV loads, MMAs on stale slots) and its loads alone (qmld, 1: no MMAs; the
# softmax on stale values, the barriers kept) at 64 and 128 heads, with session 33's epilogue
# (session 33 item 3; session 32's figures predate it). Timing builds: results wrong.
#   D=codeobjects/sm_90a/decode B=docs/runs/session29-scripts/build_variants.sh
#   bash $B qmch "-DMLA_QMT_ABLATE=2" $D/mla_decode_qm_bf16_bf16.cu   # a322065e
#   bash $B qmld "-DMLA_QMT_ABLATE=1" $D/mla_decode_qm_bf16_bf16.cu   # c79c972a
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s36c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble qmch qmld
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
for h in 64 128; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $L $S/qmch/codeobjects $S/qmld/codeobjects
done
echo "== 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 $F --iters 10" $L $S/qmch/codeobjects $S/qmld/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
