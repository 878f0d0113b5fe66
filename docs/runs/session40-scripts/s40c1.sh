# session 40 call 1: bf16 Q / fp8 KV with Q split into two e4m3 parts (MLA_RA_QSPLIT, S^T on the
# fp8 tensor cores, no K widening), checked on every request and timed against the shipped
# f16-S kernel; then session 39's unrun call 6 (the three-warpgroup fp8 qm kernel after its fix).
#   build-lead: the working tree (MLA_RA_QSPLIT 1: one m64n32k32 chain, ra bf16/fp8 f013e6bf;
#               launch_smem 173,856)
#   build-var/s40/q2: build-lead's code objects with the -DMLA_RA_QSPLIT=2 cubin (two m64n16k32
#               chains, 8d6458b6)
#   build-var/s40/base: a whole build of 6b3e975 (f16 S, ra bf16/fp8 8d26120d, 171,808)
#   build-var/s39/ws: s39c6.sh's recipe
# carry: build-lead/{src,codeobjects,tools}, build-var/s40, build-var/s39
NAME=s40c1 . scripts/call_env.sh
S=build-var/s40; B=build-lead/codeobjects
A="--kv-dtype fp8"
for d in $B $S/q2 $S/base; do
  checks $d "$A" "$A --page-size 16" "$A --page-size 1" "$A --heads 8 --qlen 2 --page-size 32" "$A --long-first 8" "$A --heads 4 --qlen 4"
done
echo "== memcheck q1 ($SECONDS s)"
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $A --heads 8 --qlen 2 --check 2 --iters 1 2>&1 | tail -1
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B $A ($SECONDS s)"; ROUNDS=3 timeout 150 $V run "$R $A" $S/base $B $S/q2
echo "== A/B varlen ($SECONDS s)"; ROUNDS=1 timeout 60 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $A" $S/base $B $S/q2
echo "== ws ($SECONDS s)"
W=build-var/s39/ws/codeobjects
checks $W "--dtype fp8 --heads 128" "--dtype fp8 --heads 64 --qlen 2 --page-size 16"
ROUNDS=1 timeout 40 $V run "$R --dtype fp8 --heads 128" $B $W
echo "== ncu q1 ($SECONDS s)"
OUT=$O/ncu timeout 100 scripts/ncu_profile.sh q1 mla_decode_ra "$R $A"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
