# session 38 call 4 (placement; nothing ships): the seesaw with the next pair's tiles prefetched into
# the L2 (MLA_QM_SS_L2PF=1: warpgroup 0 prefetches tile t0 + 2 at the pair's start, warpgroup 1
# tile t0 + 3 after SC0; one bulk prefetch per page run) on orders 3 (s3sp) and 0 (sssp), against
# s3s, sss and t1 (the shipped body), all on t1's table, at 128 and 64 heads.
#   builds: as s38c2.sh's header with -DMLA_QM_SS_L2PF=1: s3sp (order 3 staggered) fa8848be,
#   sssp (order 0 staggered) 2c9e2a1e; carry: build-lead/{src,codeobjects,tools}, build-var/s38c
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s38c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; S=/tmp/s38
for n in t1 sss sssp s3s s3sp; do
  rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects
  cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv
  [ -d build-var/s38c/$n ] && cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/
done
for v in s3sp sssp; do for a in "--heads 128" "--heads 64 --page-size 16"; do
  echo "== check $v $a"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done; done
for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $S/t1/codeobjects $S/sss/codeobjects $S/sssp/codeobjects $S/s3s/codeobjects $S/s3sp/codeobjects
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
