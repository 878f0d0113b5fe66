# session 34 call 1: the shipped mix's target table and checks (session 33's s33c5, item 0 of its
# plan), then the start-code variants against it: dq (MLA_DIV_RCP=1 MLA_LOADQ_ROW=1, every decode
# cubin), dqk (dq + MLA_WG_KVFIRST=1), i8 / i8dq (the qm fp8 epilogue's factors once, MLA_QM8_INV1=1,
# alone / with dq's flags). Checks of every variant on split plans with masked tiles and odd
# kernel_heads first.
# Build (repository root, after ninja -C build-lead; D=codeobjects/sm_90a/decode, ALL=$D/mla_decode_*.cu):
#   docs/runs/session29-scripts/build_variants.sh dq "-DMLA_DIV_RCP=1 -DMLA_LOADQ_ROW=1" $ALL
#   docs/runs/session29-scripts/build_variants.sh dqk "-DMLA_DIV_RCP=1 -DMLA_LOADQ_ROW=1 -DMLA_WG_KVFIRST=1" $ALL
#   docs/runs/session29-scripts/build_variants.sh i8 "-DMLA_QM8_INV1=1" $D/mla_decode_qm_fp8_fp8.cu
#   docs/runs/session29-scripts/build_variants.sh i8dq "-DMLA_QM8_INV1=1 -DMLA_DIV_RCP=1 -DMLA_LOADQ_ROW=1" $D/mla_decode_qm_fp8_fp8.cu
#   cp docs/runs/session34-scripts/s34c1.sh build-lead/tests/gpu/s34c1.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s34c1.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets (shipped)"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
bash docs/runs/session29-scripts/build_variants.sh assemble dq dqk i8 i8dq
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh
CH=("--heads 16" "--heads 64" "--heads 128 --qlen 2 --page-size 16" "--heads 16 --qlen 2" "--heads 20 --qlen 3"
    "--heads 12 --qlen 2" "--heads 40" "--heads 5 --qlen 3" "--dtype bf16 --kv-dtype fp8 --heads 16"
    "--dtype fp8 --heads 16" "--dtype fp8 --heads 128" "--dtype fp8 --heads 20 --qlen 3" "--heads 16 --page-size 1")
for d in dqk i8dq; do
  for a in "${CH[@]}"; do
    echo "== check $d: $a"; MLA_CODEOBJECT_DIR=$S/$d/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check|FAIL|rror"
  done
done
echo "== check dq: --heads 16 / --heads 16 --qlen 2"; for a in "--heads 16" "--heads 16 --qlen 2"; do MLA_CODEOBJECT_DIR=$S/dq/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check|FAIL|rror"; done
F="--fixed"
echo "== main job"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/dq/codeobjects $S/dqk/codeobjects
echo "== b 1 s_k 32768"; ROUNDS=3 timeout 60 $V run "--batch 1 --kv-len 32768 $F --iters 50" $L $S/dq/codeobjects $S/dqk/codeobjects
echo "== b 64 s_k 1024"; ROUNDS=3 timeout 60 $V run "--batch 64 --kv-len 1024 $F --iters 50" $L $S/dq/codeobjects $S/dqk/codeobjects
echo "== 16 x MTP 2"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --qlen 2 $F --iters 30" $L $S/dq/codeobjects $S/dqk/codeobjects
echo "== 64 heads"; ROUNDS=3 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 64 $F --iters 30" $L $S/dq/codeobjects
echo "== 128 heads"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 $F --iters 20" $L $S/dq/codeobjects
echo "== fp8 128 heads"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --heads 128 --dtype fp8 $F --iters 20" $L $S/i8/codeobjects $S/i8dq/codeobjects
echo "== bf16 Q / fp8 KV"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 $F --iters 30" $L $S/dq/codeobjects
echo "== fp8 16 heads"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --dtype fp8 $F --iters 30" $L $S/dq/codeobjects
echo "== b 1536 s_k 2048"; ROUNDS=2 timeout 90 $V run "--batch 1536 --kv-len 2048 $F --iters 10" $L $S/dq/codeobjects $S/dqk/codeobjects
echo "== host cost, main job fixed"; timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
