# session 40 call 2: call 1's split-Q builds again after the fix of their Q staging (the e4m3
# conversion without saturation was software, ~4,600 instructions a thread; now the hardware
# cvt.rn.satfinite, Inf / NaN patched to NaN): checks, memcheck, the A/B, a profile; then
# gpu_check and the target table on build-lead (MLA_RA_QSPLIT 1).
#   build-lead: ra bf16/fp8 4d68049e (QSPLIT 1), 3528 instructions
#   build-lead/tools/var/q2: build-lead's code objects with the QSPLIT 2 cubin (c16ded7d)
#   build-lead/tools/var/base: the whole build of 6b3e975 (call 1's build-var/s40/base)
# (the variants ride under build-lead/tools: gpu_check's carry already takes the 8 paths)
# carry: build-lead/{src,codeobjects,tools,tests/planner,tests/core,tests/cp,tests/gpu,examples}
NAME=s40c2 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects
A="--kv-dtype fp8"
for d in $B $S/q2; do
  checks $d "$A" "$A --page-size 16" "$A --page-size 1" "$A --heads 8 --qlen 2 --page-size 32" "$A --long-first 8" "$A --heads 4 --qlen 4"
done
echo "== memcheck q1 ($SECONDS s)"
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $A --heads 8 --qlen 2 --check 2 --iters 1 2>&1 | tail -1
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B $A ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $A" $S/base $B $S/q2/codeobjects
echo "== A/B varlen ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $A" $S/base $B $S/q2/codeobjects
echo "== ncu q1 ($SECONDS s)"
OUT=$O/ncu timeout 100 scripts/ncu_profile.sh q1 mla_decode_ra "$R $A"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
gpu_check_and_targets  # scripts/call_env.sh (the call ran these same steps written out)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
