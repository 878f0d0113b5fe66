# session 39 call 3: gpu_check's steps on the shipped cubins with MLA_RA_VSWAP 1 (ra fp8/fp8 aadec5bd,
# ra bf16/fp8 30dfc12d; the other 10 as at 5ee1553), then `mla bench --targets`.
# Call 5 ran the same steps after MLA_DECODE_RA_SLOTS 4 (s39c5.sh: NAME=s39c5).
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/${NAME:-s39c3}.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== gpu_check ($SECONDS s)"
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 330 scripts/gpu_check.sh 2>&1 | tail -48
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== targets ($SECONDS s)"; timeout 130 $T bench --targets 2>&1 | tee $O/targets.txt
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
