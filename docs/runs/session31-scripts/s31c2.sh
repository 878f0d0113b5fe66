#!/usr/bin/env bash
# session 31 call 2: where a tile's time goes inside the 16- and 32-row wg kernels (in-tile
# clock64 stamps, trace.cuh 40-69), the 16 x MTP 2 loop with the table's data (--fast-fill), and
# the register-A bf16 / fp8 kernel with one S^T chain (rs1), then with the one-barrier lazy max too
# (rs1b: 250 registers, no spill). Build first, from the repository root (after `ninja -C build-lead`):
#   D=codeobjects/sm_90a/decode; B=docs/runs/session29-scripts/build_variants.sh
#   $B tr31 "-DMLA_WG_TRACE=1" $D/mla_decode_wg_bf16_bf16.cu
#   $B rs1 "-DMLA_RA_SCHAINS=1" $D/mla_decode_ra_bf16_fp8.cu
#   $B rs1b "-DMLA_RA_SCHAINS=1 -DMLA_WG_LAZY1B=1" $D/mla_decode_ra_bf16_fp8.cu
#   cp docs/runs/session31-scripts/s31c2.sh build-lead/tests/gpu/s31c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s31c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
T=build-lead/tools/mla/mla
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
bash docs/runs/session29-scripts/build_variants.sh assemble tr31 rs1 rs1b
V=scripts/variant_bench.sh; L=$PWD/build-lead/codeobjects; S=/tmp/s29
tr() {  # decode_trace.py on the trace build
    MLA_CODEOBJECT_DIR=$S/tr31/codeobjects LIBMLA_PATH=$PWD/build-lead/src/libmla.so.0 PYTHONPATH=$PWD/bindings/python \
        timeout 40 python3 benchmarks/decode_trace.py --iters 10 "$@" 2>&1
}
echo "== trace b64"; tr --batch 64 --kv-len 1024
echo "== trace 32 heads b128"; tr --batch 128 --kv-len 4096 --heads 32
echo "== trace main"; tr --batch 128 --kv-len 4096
echo "== 16x2 loop, random KV"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30" $L
echo "== 16x2 loop, --fast-fill (the table's KV)"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --fixed --qlen 2 --iters 30 --fast-fill" $L
echo "== bf16/fp8 16h"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --fixed --dtype bf16 --kv-dtype fp8 --iters 30" $L $S/rs1/codeobjects $S/rs1b/codeobjects
for v in rs1 rs1b; do
    echo "== check $v"; MLA_CODEOBJECT_DIR=$S/$v/codeobjects timeout 30 $T run --batch 8 --kv-len 3000 --dtype bf16 --kv-dtype fp8 --iters 1 --check 8 2>&1 | grep -E "check|decode:"
done
echo done
