# session 39 call 5: gpu_check and the targets on the shipped cubins after MLA_DECODE_RA_SLOTS 4 (ra fp8/fp8 71f2d4af,
# ra bf16/fp8 8d26120d; launch_smem 163616 / 171808; the other 10 as at 5ee1553): call 3's steps.
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s39c5 exec bash "$(dirname "$0")/s39c3.sh"
