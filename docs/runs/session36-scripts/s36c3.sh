# session 36 call 3: c8dq (564ea36e, call 2's candidate whose b 1536 A/B was cut at one round by
# its timeout): b 1536 A/B against the set (2 rounds), gpu_check on c8dq, the target table on it.
# Rule fixed before the call: c8dq ships if gpu_check passes and its b 1536 median is at most the
# set's (call 2's rule with its missing b 1536 median taken here).
#   bash docs/runs/session29-scripts/build_variants.sh c8dq "-DMLA_DIV_RCP_SITES=63" codeobjects/sm_90a/decode/mla_decode_wg_bf16_bf16.cu
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s36c3.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
bash docs/runs/session29-scripts/build_variants.sh assemble c8dq
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
echo "== b 1536 ($SECONDS s)"; ROUNDS=2 timeout 150 $V run "--batch 1536 --kv-len 2048 $F --iters 8" $L $S/c8dq/codeobjects
cp build-lead/tests/gpu/s29/c8dq/mla_decode_wg_bf16_bf16.cubin build-lead/codeobjects/sm_90a/decode/
echo "== gpu_check on c8dq ($SECONDS s)"
BUILD=build-lead OUT=$O/gc PLAN_SWEEP=100 timeout 280 scripts/gpu_check.sh 2>&1 | tail -46
(cd $O && tar czf gc.tgz gc && rm -rf gc)
left 420; echo "== targets on c8dq ($SECONDS s)"; timeout 100 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; timeout 20 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
