# session 40 call 4: gpu_check and the target table on the final tree (the shipped cubins, SASS as
# at 6b3e975; the host's launch checks now also admit launch_kv_tma 1 on register-A rows built with
# MLA_RA_VSWAP 3, which no shipped row asks for), then the box ring of call 3 (MLA_RA_VSWAP 3)
# with L2 promotion 128 and 256 bytes on its map (table variants) against promotion none and the
# shipped ring, at fp8 16 heads.
#   build-lead/tools/var/box: the whole build of call 3 (efab923's tree); box128, box256: the same
#   library and tool, their table's ra rows at launch_kv_tma_l2 128 / 256
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s40c4 . scripts/call_env.sh
S=build-lead/tools/var
gpu_check_and_targets  # scripts/call_env.sh (the call ran these same steps written out)
echo "== box L2 promotion ($SECONDS s)"
ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --fixed --iters 20 --dtype fp8" build-lead/codeobjects $S/box $S/box128 $S/box256
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
