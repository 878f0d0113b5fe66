# session 34 call 2: the target table on the new set (call 1's dq cubins with the qm fp8 i8dq one:
# the defaults MLA_DIV_RCP=1, MLA_LOADQ_ROW=1, MLA_QM8_INV1=1), then against it: rq (the register-A
# kernels' Q staged row by row, MLA_RA_QROW=1), st0 (the per-row store loop, MLA_STORE_ROWS_STEP=0,
# now that its division is cheap; every cubin that steps, but the bf16 Q / fp8 KV register-A one,
# which spills with it alone), rqst0 (both, register-A cubins), o33 (session 33's shipped decode
# cubins, rebuilt from this tree with the three flags 0: every SASS md5 equal to them), q8r (the wg
# fp8-Q staging's loads before its stores, MLA_LOADQ8_ROW=1: fp8 32-row rows).
# Build (repository root, after ninja -C build-lead; D=codeobjects/sm_90a/decode):
#   B=docs/runs/session29-scripts/build_variants.sh
#   $B rq "-DMLA_RA_QROW=1" $D/mla_decode_ra_bf16_fp8.cu $D/mla_decode_ra_fp8_fp8.cu
#   $B st0 "-DMLA_STORE_ROWS_STEP=0" $D/mla_decode_{wg_bf16_bf16,wg_bf16_fp8,wg_fp8_fp8,qm_fp8_fp8,qm_bf16_fp8,ra_fp8_fp8}.cu
#   $B rqst0 "-DMLA_STORE_ROWS_STEP=0 -DMLA_RA_QROW=1" $D/mla_decode_ra_bf16_fp8.cu $D/mla_decode_ra_fp8_fp8.cu
#   $B q8r "-DMLA_LOADQ8_ROW=1" $D/mla_decode_wg_fp8_fp8.cu
#   $B o33 "-DMLA_DIV_RCP=0 -DMLA_LOADQ_ROW=0 -DMLA_QM8_INV1=0" $D/mla_decode_*.cu
#   cp docs/runs/session34-scripts/s34c2.sh build-lead/tests/gpu/s34c2.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s34c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== targets (new set)"; timeout 120 $T bench --targets 2>&1 | tee $O/targets.txt
bash docs/runs/session29-scripts/build_variants.sh assemble rq st0 rqst0 o33 q8r
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $2 --check -1 --iters 2 2>&1 | grep -E "check|FAIL|rror"; }
for a in "--dtype bf16 --kv-dtype fp8 --heads 16" "--dtype fp8 --heads 16" "--dtype fp8 --heads 5 --qlen 3" "--dtype bf16 --kv-dtype fp8 --heads 12"; do chk rqst0 "$a"; chk rq "$a"; done
for a in "--heads 16" "--heads 16 --qlen 2" "--heads 5 --qlen 3" "--heads 20 --qlen 3" "--dtype fp8 --heads 128" "--dtype fp8 --heads 40" "--dtype bf16 --kv-dtype fp8 --heads 64" "--dtype fp8 --heads 16 --qlen 2" "--dtype fp8 --heads 16"; do chk st0 "$a"; done
for a in "--dtype fp8 --heads 16 --qlen 2" "--dtype fp8 --heads 32" "--dtype fp8 --heads 12 --qlen 2"; do chk q8r "$a"; done
F="--fixed"
echo "== fp8 16 x MTP 2"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --dtype fp8 --qlen 2 $F --iters 30" $L $S/q8r/codeobjects
echo "== bf16 Q / fp8 KV"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 $F --iters 30" $L $S/rq/codeobjects $S/rqst0/codeobjects
echo "== fp8 16 heads"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --dtype fp8 $F --iters 30" $L $S/rq/codeobjects $S/rqst0/codeobjects $S/st0/codeobjects
echo "== main job"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/st0/codeobjects
echo "== b 64 s_k 1024"; ROUNDS=3 timeout 40 $V run "--batch 64 --kv-len 1024 $F --iters 50" $L $S/st0/codeobjects
echo "== b 1 s_k 32768"; ROUNDS=3 timeout 40 $V run "--batch 1 --kv-len 32768 $F --iters 50" $L $S/st0/codeobjects
echo "== 16 x MTP 2"; ROUNDS=3 timeout 60 $V run "--batch 128 --kv-len 4096 --qlen 2 $F --iters 30" $L $S/st0/codeobjects
echo "== fp8 128 heads"; ROUNDS=2 timeout 60 $V run "--batch 128 --kv-len 4096 --heads 128 --dtype fp8 $F --iters 20" $L $S/st0/codeobjects
echo "== b 1536 s_k 2048"; ROUNDS=2 timeout 100 $V run "--batch 1536 --kv-len 2048 $F --iters 8" $L $S/o33/codeobjects $S/st0/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
