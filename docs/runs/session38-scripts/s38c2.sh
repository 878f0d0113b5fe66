# session 38 call 2 (placement; nothing ships): the seesaw's order 3 (MLA_QM_SS_ORDER=3, session 38:
# warpgroup 1 issues P0 V0_R right after SC0 and S1's wait, before its softmax 1, so that it runs
# beside the softmax and ahead of warpgroup 0's P1 V1_L; slot 0's late blocks refilled after SC1)
# and, on it, which ring fill's wait the loads expose (MLA_QM_SS_NOWAIT=MASK: the mbarriers whose
# bit is set tested once instead of waited on; timing only, wrong results).
#   builds (build machine): nvcc -gencode=arch=compute_90a,code=sm_90a --cubin -O3 -std=c++17 -lineinfo
#   -Xptxas=-warn-spills,-warn-lmem-usage -I codeobjects/sm_90a -DMLA_QM_SEESAW=1 FLAGS
#   codeobjects/sm_90a/decode/mla_decode_qm_bf16_bf16.cu -o build-var/s38c/NAME/mla_decode_qm_bf16_bf16.cubin
#     s3s    -DMLA_QM_SS_STAGGER=1 -DMLA_QM_SS_ORDER=3                          d6e32fb9
#     s3sa   -DMLA_QM_SS_STAGGER=1 -DMLA_QM_SS_ORDER=3 -DMLA_QMT_ABLATE=2       8e881ece
#     s3     -DMLA_QM_SS_ORDER=3 (not staggered)                                feae6d2a
#     s3ne0  s3s + -DMLA_QM_SS_NOWAIT=1  (E0: slot 0's blocks 0..3, 8)          aa3166a8
#     s3nl0  s3s + -DMLA_QM_SS_NOWAIT=2  (L0: slot 0's blocks 4..7)             e5ee903d
#     s3n1   s3s + -DMLA_QM_SS_NOWAIT=12 (L1 and E1: slot 1)                    e2c41b1d
#     s3nall s3s + -DMLA_QM_SS_NOWAIT=15                                        0bd755cf
#   (sss, sssa and the t1 table as s38c1.sh's header)
#   carry: build-lead/{src,codeobjects,tools}, build-var/s38c
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s38c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; S=/tmp/s38
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
for n in t1 sss sssa s3s s3sa s3 s3ne0 s3nl0 s3n1 s3nall; do
  rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects
  cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv
  [ -d build-var/s38c/$n ] && cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/
done
for v in s3s s3; do for a in "--heads 128" "--heads 64" "--heads 128 --qlen 2" "--heads 64 --page-size 16" "--heads 128 --long-first 9"; do
  echo "== check $v $a"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done; done
echo "== memcheck s3s ($SECONDS s)"; MLA_CODEOBJECT_DIR=$S/s3s/codeobjects timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $T run --batch 3 --kv-len 700 --heads 128 --iters 1 --check -1 > $O/memcheck_s3s.log 2>&1; echo "rc $?"; tail -2 $O/memcheck_s3s.log
for h in 128 64; do
  left 420; echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 130 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $S/t1/codeobjects $S/sssa/codeobjects $S/s3sa/codeobjects $S/sss/codeobjects $S/s3s/codeobjects $S/s3/codeobjects $S/s3ne0/codeobjects $S/s3nl0/codeobjects $S/s3n1/codeobjects $S/s3nall/codeobjects
done
left 480; echo "== 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 $F --iters 20" $S/t1/codeobjects $S/s3s/codeobjects $S/s3/codeobjects
echo "== synccheck s3s, one request ($SECONDS s)"; MLA_CODEOBJECT_DIR=$S/s3s/codeobjects timeout 40 compute-sanitizer --tool synccheck --error-exitcode 9 $T run --batch 1 --kv-len 256 --heads 64 --iters 1 --check -1 > $O/synccheck_s3s_b1.log 2>&1; echo "rc $?"; tail -4 $O/synccheck_s3s_b1.log
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
