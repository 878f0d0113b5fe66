# session 39 call 2: the register-A kernels' token maps (MLA_RA_VSWAP) against the V^T loads' bank
# conflicts, at fp8 16 heads and bf16 Q / fp8 KV.
#   vs1co: build-lead's code objects with -DMLA_RA_VSWAP=1 cubins (ra fp8/fp8 aadec5bd, ra bf16/fp8
#          30dfc12d): pairs swapped, 576-byte rows (2-way V loads).
#   vs2full: a whole build (library, tool, table) with MLA_RA_VSWAP 2 in decode_params.h (ra fp8/fp8
#          49dfc59d, ra bf16/fp8 4f9f4544; launch_smem 205864 / 214056): 592-byte rows, one bulk
#          copy a token, map 2 (V and K loads conflict-free).
#   ab4: the shipped ra fp8/fp8 cubin built with MLA_WG_ABLATE=4 (no compute; e0d0f725).
# carry: build-lead/{src,codeobjects,tools}, build-var/s39
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s39c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; S=build-var/s39; B=build-lead/codeobjects
F2=$S/vs2full
run1() { MLA_CODEOBJECT_DIR=$S/vs1co/codeobjects timeout 40 $T "$@"; }
run2() { LD_LIBRARY_PATH=$PWD/$F2/src MLA_CODEOBJECT_DIR=$PWD/$F2/codeobjects timeout 40 $F2/tools/mla/mla "$@"; }
for a in "--dtype fp8" "--kv-dtype fp8" "--dtype fp8 --page-size 1" "--kv-dtype fp8 --page-size 16" "--dtype fp8 --heads 8 --qlen 2" "--kv-dtype fp8 --heads 8 --qlen 2 --page-size 32" "--dtype fp8 --long-first 8"; do
  for v in 1 2; do echo "== check vs$v $a"; run$v run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"; done
done
echo "== memcheck vs1 ($SECONDS s)"
MLA_CODEOBJECT_DIR=$S/vs1co/codeobjects timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --dtype fp8 --heads 8 --qlen 2 --check 2 --iters 1 2>&1 | tail -1
echo "== memcheck vs2 ($SECONDS s)"
LD_LIBRARY_PATH=$PWD/$F2/src MLA_CODEOBJECT_DIR=$PWD/$F2/codeobjects timeout 60 compute-sanitizer --tool memcheck $F2/tools/mla/mla run --batch 8 --kv-len 2000 --varlen --kv-dtype fp8 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
for a in "--dtype fp8" "--kv-dtype fp8"; do
  echo "== A/B $a ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a" $B $S/vs1co/codeobjects $F2
done
echo "== ab4 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "$R --dtype fp8" $S/ab4/codeobjects
echo "== ncu ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$F2/codeobjects BUILD=$F2 OUT=$O/ncu timeout 100 scripts/ncu_profile.sh vs2f8 mla_decode_ra "$R --dtype fp8"
MLA_CODEOBJECT_DIR=$PWD/$S/vs1co/codeobjects OUT=$O/ncu timeout 100 scripts/ncu_profile.sh vs1f8 mla_decode_ra "$R --dtype fp8"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
