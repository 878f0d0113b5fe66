# session 35 call 4 (the session's last ~290 s of device time): does the softmax's proxy fence
# (MEMBAR.ALL.CTA + FENCE.VIEW.ASYNC.S before P^T's barrier) wait for the MMA warpgroup's own
# outstanding cp.async copies of the next tile? c8f0 = c8p4 with that fence dropped
# (MLA_WG_ABLATE=256: a timing hook, its results may race), against c8p4 and the set (c8p1):
# page 1 and 2 (cp.async ring) and the main job (TMA: no copies outstanding, the control).
#   cp docs/runs/session35-scripts/s35c4.sh build-lead/tests/gpu/s35c4.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s35c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
bash docs/runs/session29-scripts/build_variants.sh assemble c8p4 c8f0
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
echo "== page 1 ($SECONDS s)"; ROUNDS=2 timeout 40 $V run "--batch 128 --kv-len 4096 --page-size 1 $F --iters 20" $L $S/c8p4/codeobjects $S/c8f0/codeobjects
echo "== main job ($SECONDS s)"; ROUNDS=2 timeout 25 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/c8f0/codeobjects
echo "== page 2 ($SECONDS s)"; ROUNDS=1 timeout 25 $V run "--batch 128 --kv-len 4096 --page-size 2 $F --iters 20" $S/c8p4/codeobjects $S/c8f0/codeobjects
echo "done ($SECONDS s)"
