# session 41 call 2: (1) the fp8 qm kernel with warpgroup 1's V^T fragments built before PREADY
# (MLA_QM8_PRE 1, exact f16 P; 255 registers, no spill), checked and timed against the shipped
# kernel; (2) gpu_check and the target table on the tree, whose bf16-Q register-A cubin now takes
# the Q exponent over the finite elements (d5b0e77a; gpu_decode_test's new case Q x 3.3e38).
#   build-lead/tools/var/pre: code objects with the PRE qm fp8/fp8 cubin
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s41c2 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $S/pre "$a --heads 64" "$a --heads 128" "$a --heads 128 --page-size 16" "$a --heads 32 --qlen 2" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8" "$a --heads 64 --page-size 1"
echo "== sanitizers ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/pre/codeobjects timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $a --heads 128 --check 2 --iters 1 2>&1 | tail -1
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a --heads 128" $B $S/pre/codeobjects
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "$R $a --heads 64" $B $S/pre/codeobjects
gpu_check_and_targets
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
