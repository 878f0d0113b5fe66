# session 42 call 1: two fp8 qm variants and one bf16 qm variant, checked on every request and timed
# against the shipped cubins (A/B, alternating rounds).
#   build-lead/tools/var/late: fp8 qm with MLA_QM8_LATE1 1 (warpgroup 1's O^T half of t behind
#     warpgroup 0's S(t + 1) in the tensor pipe; 255 registers, no spill; 07cf991d)
#   build-lead/tools/var/fs8:  fp8 qm with MLA_QM_FAST_SOFTMAX 1 (unmasked tiles' softmax, flags
#     tested 2 a lane; 243 registers; 31339eb3)
#   build-lead/tools/var/fsb:  bf16 qm with MLA_QM_FAST_SOFTMAX 1 (255 registers; 8020ab47)
# carry: build-lead/{src,codeobjects,tools}
NAME=s42c1 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
for v in late fs8; do
  checks $S/$v "$a --heads 128" "$a --heads 64 --page-size 16" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8" "$a --heads 32 --qlen 2"
done
checks $S/fsb "--heads 128" "--heads 64 --qlen 2 --page-size 16" "--heads 128 --long-first 8"
echo "== sanitizers late ($SECONDS s)"
export MLA_CODEOBJECT_DIR=$PWD/$S/late/codeobjects
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $a --heads 128 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 $T run --batch 4 --kv-len 2000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool racecheck $T run --batch 4 --kv-len 1000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 100 $V run "$R $a --heads 128" $B $S/late/codeobjects $S/fs8/codeobjects
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "$R $a --heads 64" $B $S/late/codeobjects $S/fs8/codeobjects
echo "== A/B fp8 128 heads varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $a --heads 128" $B $S/late/codeobjects
echo "== A/B bf16 128 heads ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "$R --heads 128" $B $S/fsb/codeobjects
echo "== A/B bf16 128 heads MTP 2 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "$R --heads 128 --qlen 2" $B $S/fsb/codeobjects
echo "== A/B bf16 64 heads ($SECONDS s)"; ROUNDS=1 timeout 30 $V run "$R --heads 64" $B $S/fsb/codeobjects
echo "== ncu late ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/late/codeobjects OUT=$O/ncu timeout 100 scripts/ncu_profile.sh late mla_decode_qm "$R $a --heads 128"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
