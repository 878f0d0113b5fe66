# session 32 call 5: the 2-slot ring's throughput against a calibrated hold. The 16-head TMA body with
# loads only (MLA_WG_ABLATE=4) and its MMA warpgroup spinning N clocks per tile before it frees the
# slot (MLA_WG_SPIN=N: a serial per-tile hold with no shared-memory traffic), N = 0 (wa4), 1000,
# 2000, 3000, 4500, on the main job's 604 MB. Timing only (the results are wrong by design).
# Build (repository root, after ninja -C build-lead):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B wa4 "-DMLA_WG_ABLATE=4" $D/mla_decode_wg_bf16_bf16.cu
#   for n in 1000 2000 3000 4500; do $B sp$n "-DMLA_WG_ABLATE=4 -DMLA_WG_SPIN=$n" $D/mla_decode_wg_bf16_bf16.cu; done
#   cp docs/runs/session32-scripts/s32c5.sh build-lead/tests/gpu/s32c5.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s32c5.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble wa4 sp1000 sp2000 sp3000 sp4500
V=scripts/variant_bench.sh; S=/tmp/s29
echo "== 16 heads fixed (main job), hold sweep"; ROUNDS=2 timeout 120 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $S/wa4/codeobjects $S/sp1000/codeobjects $S/sp2000/codeobjects $S/sp3000/codeobjects $S/sp4500/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
