# session 41 call 3: the fp8 qm body with S and the softmax split between the warpgroups by tokens
# (MLA_QM8_SPLIT 1, decode_qm8_split.cuh; exact f16 P; 244 registers, no spill), checked (every
# request against the CPU reference, sanitizers) and timed against the shipped kernel.
#   build-lead/tools/var/split: code objects with the SPLIT qm fp8/fp8 cubin
# carry: build-lead/{src,codeobjects,tools}
NAME=s41c3 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $S/split "$a --heads 64" "$a --heads 128" "$a --heads 128 --page-size 16" "$a --heads 32 --qlen 2" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8" "$a --heads 64 --page-size 1" "$a --heads 64 --no-causal --qlen 1" "$a --heads 16 --qlen 4 --no-causal"
echo "== sanitizers ($SECONDS s)"
export MLA_CODEOBJECT_DIR=$PWD/$S/split/codeobjects
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $a --heads 128 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
timeout 90 compute-sanitizer --tool racecheck $T run --batch 2 --kv-len 700 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a --heads 128" $B $S/split/codeobjects
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "$R $a --heads 64" $B $S/split/codeobjects
echo "== A/B fp8 128 heads varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $a --heads 128" $B $S/split/codeobjects
echo "== A/B fp8 16 x MTP 4 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "$R $a --heads 16 --qlen 4" $B $S/split/codeobjects
echo "== ncu ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/split/codeobjects OUT=$O/ncu timeout 100 scripts/ncu_profile.sh split mla_decode_qm "$R $a --heads 128"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
