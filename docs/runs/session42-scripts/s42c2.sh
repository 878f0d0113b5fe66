# session 42 call 2: the tree with the bf16 qm cubin on the fast softmax (MLA_QM_FAST_SOFTMAX 1,
# 8020ab47) against session 41's code objects (build-lead/tools/var/ship), the fp8 qm cubin with
# one S chain (build-lead/tools/var/c1, -DMLA_QM8_SCHAINS=1, f857de05), then gpu_check and the
# target table on the tree.
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s42c2 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $S/c1 "$a --heads 128" "$a --heads 64 --page-size 16" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8"
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 70 $V run "$R $a --heads 128" $B $S/c1/codeobjects
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 40 $V run "$R $a --heads 64" $B $S/c1/codeobjects
echo "== A/B bf16 128 heads ($SECONDS s)"; ROUNDS=3 timeout 70 $V run "$R --heads 128" $S/ship/codeobjects $B
echo "== A/B bf16 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "$R --heads 128 --qlen 2" $S/ship/codeobjects $B
echo "== A/B bf16 64 heads ($SECONDS s)"; ROUNDS=2 timeout 40 $V run "$R --heads 64" $S/ship/codeobjects $B
echo "== A/B bf16 32 heads MTP 2 ($SECONDS s)"; ROUNDS=1 timeout 30 $V run "$R --heads 32 --qlen 2" $S/ship/codeobjects $B
gpu_check_and_targets
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
