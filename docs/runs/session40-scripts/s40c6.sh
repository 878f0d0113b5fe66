# session 40 call 6: gpu_check and the target table on the final tree, after the review's fixes
# (the off-by-default register-A options' fences and arrivals, the launch check's message, a table
# test of it, scripts/call_env.sh); the shipped cubins' SASS is as at 6b3e975.
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s40c6 . scripts/call_env.sh
gpu_check_and_targets
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
