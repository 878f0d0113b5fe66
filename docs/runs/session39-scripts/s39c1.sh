# session 39 call 1 (placement + one A/B): the fp8-KV 16-row register-A kernels' chain.
#  1. cvt_rate: issue rate of cvt.rn.f16x2.e4m3x2 (F2FP) against prmt / lop3 / shf / the bit trick.
#  2. bc = -DMLA_E4M3_BITCVT=1 (ra fp8/fp8 b4227e5b, ra bf16/fp8 cdf7150c, qm fp8/fp8 be0fbd2c):
#     checks on every request, memcheck, then A/B against the shipped cubins on the three fp8 rows.
#  3. ab1..ab4 = the ra fp8/fp8 cubin with MLA_WG_ABLATE 1 (no O^T), 2 (no S^T MMAs), 3, 4 (no
#     compute at all): the fp8 16-head row's time without each part (927bbed9 cb44cd7c ae00d388 e0d0f725).
#  4. ncu profiles (source-level stall samples) of the shipped ra fp8/fp8 and ra bf16/fp8 kernels.
# carry: build-lead/{src,codeobjects,tools}, build-var/s39
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s39c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; S=build-var/s39; B=build-lead/codeobjects
echo "== cvt_rate"; timeout 30 $S/cvt_rate
for a in "--dtype fp8" "--kv-dtype fp8" "--dtype fp8 --heads 128" "--dtype fp8 --page-size 1" "--kv-dtype fp8 --heads 8 --qlen 2" "--dtype fp8 --heads 64 --qlen 2"; do
  echo "== check bc $a"; MLA_CODEOBJECT_DIR=$S/bcco/codeobjects timeout 40 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done
echo "== memcheck bc ra fp8 ($SECONDS s)"; MLA_CODEOBJECT_DIR=$S/bcco/codeobjects timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --dtype fp8 --check 2 --iters 1 2>&1 | tail -3
R="--batch 128 --kv-len 4096 --fixed --iters 20"
for a in "--dtype fp8" "--kv-dtype fp8" "--dtype fp8 --heads 128"; do
  echo "== A/B $a ($SECONDS s)"; ROUNDS=3 timeout 90 $V run "$R $a" $B $S/bcco/codeobjects
done
echo "== ablations, fp8 16 heads ($SECONDS s)"; ROUNDS=2 timeout 90 $V run "$R --dtype fp8" $B $S/ab1/codeobjects $S/ab2/codeobjects $S/ab3/codeobjects $S/ab4/codeobjects
echo "== ncu ($SECONDS s)"
OUT=$O/ncu timeout 120 scripts/ncu_profile.sh ra8 mla_decode_ra "$R --dtype fp8"
OUT=$O/ncu timeout 120 scripts/ncu_profile.sh rab mla_decode_ra "$R --kv-dtype fp8"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
