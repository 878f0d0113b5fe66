# session 39 call 6: the three-warpgroup fp8 qm kernel (-DMLA_QM8_WS=1, build-var/s39/ws: its table
# routes the fp8/fp8 64-row rows to mla_decode_qm_fp8_fp8_m64_ws at 384 threads) after the review's
# fix of its MLA_QM8_INV1 epilogue factor: checked on every request, then timed against the shipped
# two-warpgroup kernel at fp8 128 heads (one round). Not run in session 39 (starts refused). The
# variant: build-lead/codeobjects copied to build-var/s39/ws/codeobjects, the qm fp8 cubin rebuilt
# with -DMLA_QM8_WS=1 (208bc61b), and its fp8,fp8,64 table rows set to 384 threads and the _ws kernel.
# carry: build-lead/{src,codeobjects,tools}, build-var/s39
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s39c6.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla; W=build-var/s39/ws/codeobjects
for a in "--heads 128" "--heads 64 --qlen 2 --page-size 16"; do
  echo "== check ws --dtype fp8 $a"; MLA_CODEOBJECT_DIR=$PWD/$W timeout 40 $T run --batch 24 --kv-len 3000 --varlen --dtype fp8 $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror|qm_fp8"
done
ROUNDS=1 timeout 40 scripts/variant_bench.sh run "--batch 128 --kv-len 4096 --fixed --iters 20 --dtype fp8 --heads 128" build-lead/codeobjects $W
echo "done ($SECONDS s)"
