# session 34 call 3 (the session's last ~200 s of device time): page size 1 on the other kernels,
# session 33's cubins (o33) against the shipped set (call 2's, with the wg bf16/bf16 cubin back to
# session 33's after call 2's page-1 A/B), one round each: does the tile-row division slow any
# other cubin's cp.async path as it did the 16-row bf16 kernel's?
#   cp docs/runs/session34-scripts/s34c3.sh build-lead/tests/gpu/s34c3.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s34c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
bash docs/runs/session29-scripts/build_variants.sh assemble o33
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh
for a in "--heads 16" "--heads 64" "--dtype bf16 --kv-dtype fp8" "--dtype fp8" "--dtype fp8 --heads 128" "--heads 128"; do
  echo "== page 1: $a"; ROUNDS=1 timeout 25 $V run "--batch 128 --kv-len 4096 --page-size 1 $a --fixed --iters 10" $L $S/o33/codeobjects
done
echo done
