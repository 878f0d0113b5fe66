# session 42 call 4: the fp8 qm body with V widened once a tile into shared memory (MLA_QM8_WV 1,
# decode_qm8_wv.cuh; build-lead/tools/var/wv, 7194a2d0), checked on every request, sanitized, timed
# against the shipped cubin and profiled.
# carry: build-lead/{src,codeobjects,tools}
NAME=s42c4 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $S/wv "$a --heads 128" "$a --heads 64 --page-size 16" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8" "$a --heads 32 --qlen 2" "$a --heads 64 --page-size 128"
echo "== sanitizers ($SECONDS s)"
export MLA_CODEOBJECT_DIR=$PWD/$S/wv/codeobjects
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $a --heads 128 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 $T run --batch 4 --kv-len 2000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool racecheck $T run --batch 4 --kv-len 1000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 70 $V run "$R $a --heads 128" $B $S/wv/codeobjects
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 40 $V run "$R $a --heads 64" $B $S/wv/codeobjects
echo "== A/B fp8 128 heads varlen ($SECONDS s)"; ROUNDS=1 timeout 30 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $a --heads 128" $B $S/wv/codeobjects
echo "== ncu wv ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/wv/codeobjects OUT=$O/ncu timeout 100 scripts/ncu_profile.sh wv mla_decode_qm "$R $a --heads 128"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
