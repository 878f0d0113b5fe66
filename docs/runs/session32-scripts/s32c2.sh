# session 32 call 2: the per-block mbarriers of the qm TMA body (MLA_QMT_BLOCKBAR=1, bb32, with the
# late trigger lt31 in the same cubin) against the shipped qm_bf16 cubin, lt31 alone, and lt31 under
# the 3-D map (launch_kv_tma 1, table-only: 9 boxes a tile instead of one page box); correctness of
# bb32 first (mla run --check -1 on 6 shapes, gpu_decode_test --quick, memcheck, synccheck).
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B lt31 "-DMLA_QM_RA_LATE_TRIG=1" $D/mla_decode_qm_bf16_bf16.cu $D/mla_decode_qm_fp8_fp8.cu \
#      $D/mla_decode_ra_bf16_fp8.cu $D/mla_decode_ra_fp8_fp8.cu
#   $B bb32 "-DMLA_QMT_BLOCKBAR=1 -DMLA_QM_RA_LATE_TRIG=1" $D/mla_decode_qm_bf16_bf16.cu
#   cp docs/runs/session32-scripts/s32c2.sh build-lead/tests/gpu/s32c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
B=docs/runs/session29-scripts/build_variants.sh
bash $B assemble lt31 bb32
S=/tmp/s29
# lt31q: lt31's qm_bf16 cubin only (the shipping candidate's qm row); kv1: the same under the 3-D map
mkdir -p $S/lt31q $S/kv1; rm -rf $S/lt31q/codeobjects $S/kv1/codeobjects
cp -r build-lead/codeobjects $S/lt31q/codeobjects
cp build-lead/tests/gpu/s29/lt31/mla_decode_qm_bf16_bf16.cubin $S/lt31q/codeobjects/sm_90a/decode/
cp -r $S/lt31q/codeobjects $S/kv1/codeobjects
for d in $S/kv1 $S/bb32; do
  sed -i 's/,mla_decode_qm_bf16_bf16.cubin,2,/,mla_decode_qm_bf16_bf16.cubin,1,/' $d/codeobjects/sm_90a/decode/mla_decode.csv
  grep -c "qm_bf16_bf16.cubin,1," $d/codeobjects/sm_90a/decode/mla_decode.csv
done
T=build-lead/tools/mla/mla
for a in "--heads 64" "--heads 128" "--heads 64 --page-size 16" "--heads 128 --qlen 2 --page-size 8" "--heads 64 --qlen 3 --page-size 32" "--heads 128 --page-size 128"; do
  echo "== check bb32: $a"; MLA_CODEOBJECT_DIR=$S/bb32/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "plan:|check|decode:"
done
echo "== gpu_decode_test --quick on bb32"; MLA_CODEOBJECT_DIR=$S/bb32/codeobjects timeout 150 build-lead/tests/gpu/gpu_decode_test --quick 2>&1 | tail -4
echo "== memcheck bb32"; MLA_CODEOBJECT_DIR=$S/bb32/codeobjects timeout 60 compute-sanitizer --tool memcheck $T run --batch 4 --kv-len 2000 --heads 128 --varlen --check -1 --iters 1 2>&1 | grep -E "check:|ERROR SUMMARY"
echo "== synccheck bb32"; MLA_CODEOBJECT_DIR=$S/bb32/codeobjects timeout 60 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --heads 64 --page-size 16 --varlen --check -1 --iters 1 2>&1 | grep -E "check:|ERROR SUMMARY"
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects
echo "== 64 heads fixed"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 64 --fixed --iters 30" $L $S/lt31q/codeobjects $S/kv1/codeobjects $S/bb32/codeobjects
echo "== 128 heads fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --fixed --iters 20" $L $S/lt31q/codeobjects $S/kv1/codeobjects $S/bb32/codeobjects
echo "== 128 heads MTP 2 fixed"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --qlen 2 --fixed --iters 10" $L $S/kv1/codeobjects $S/bb32/codeobjects
echo "== 64 heads varied"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 64 --varlen --iters 30" $L $S/lt31q/codeobjects $S/bb32/codeobjects
echo done
