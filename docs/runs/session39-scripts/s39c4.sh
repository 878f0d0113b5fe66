# session 39 call 4 (after MLA_RA_VSWAP 1 shipped): the register-A kernels' S^T chains and ring depth
# re-tuned on the new order: c1 / c3 = -DMLA_RA_SCHAINS=1 / 3 (shipped 2), s4 = -DMLA_DECODE_RA_SLOTS=4
# (shipped 5; less shared memory than the rows' launch_smem, which the kernel allows), both ra
# cubins in each (fp8/fp8 357f69c5 59c88d32 71f2d4af; bf16/fp8 40562f66 2749ff5a 8d26120d); and the
# host cost of the main job with one launch.
# carry: build-lead/{src,codeobjects,tools}, build-var/s39
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s39c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; S=build-var/s39/sw; B=build-lead/codeobjects
echo "== host cost, main job fixed (one launch)"; timeout 20 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
for v in c1 c3 s4; do for a in "--dtype fp8 --heads 8 --qlen 2" "--kv-dtype fp8"; do
  echo "== check $v $a"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 40 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done; done
R="--batch 128 --kv-len 4096 --fixed --iters 20"
for a in "--dtype fp8" "--kv-dtype fp8"; do
  echo "== $a ($SECONDS s)"; ROUNDS=3 timeout 130 $V run "$R $a" $B $S/c1/codeobjects $S/c3/codeobjects $S/s4/codeobjects
done
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
