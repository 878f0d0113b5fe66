# session 42 call 3: the register-A cubins with the one-barrier lazy softmax (build-lead/tools/var/
# ra1b: bf16 Q, -DMLA_WG_LAZY1B=1, 314922f5; ra8lz: fp8 Q, -DMLA_WG_LAZY=8, 00b6af53), checked on
# every request and timed against the shipped cubins; then the ncu of the shipped bf16 qm cubin at
# 128 heads.
# carry: build-lead/{src,codeobjects,tools}
NAME=s42c3 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects
k="--dtype bf16 --kv-dtype fp8"; f="--dtype fp8"
checks $S/ra1b "$k --heads 16" "$k --heads 16 --page-size 1" "$k --heads 8 --qlen 2 --page-size 16" "$k --heads 16 --long-first 8"
checks $S/ra8lz "$f --heads 16" "$f --heads 16 --page-size 1" "$f --heads 8 --qlen 2 --page-size 16" "$f --heads 16 --long-first 8"
echo "== sanitizers ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/ra1b/codeobjects timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 $T run --batch 4 --kv-len 2000 --varlen $k --heads 16 --check 2 --iters 1 2>&1 | tail -1
MLA_CODEOBJECT_DIR=$PWD/$S/ra8lz/codeobjects timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 $T run --batch 4 --kv-len 2000 --varlen $f --heads 16 --check 2 --iters 1 2>&1 | tail -1
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B bf16 Q / fp8 KV ($SECONDS s)"; ROUNDS=3 timeout 60 $V run "$R $k --heads 16" $B $S/ra1b/codeobjects
echo "== A/B fp8 16 heads ($SECONDS s)"; ROUNDS=3 timeout 60 $V run "$R $f --heads 16" $B $S/ra8lz/codeobjects
echo "== A/B bf16 Q / fp8 KV varlen ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $k --heads 16" $B $S/ra1b/codeobjects
echo "== A/B fp8 16 heads varlen ($SECONDS s)"; ROUNDS=2 timeout 50 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $f --heads 16" $B $S/ra8lz/codeobjects
echo "== ncu bf16 qm 128 heads ($SECONDS s)"
OUT=$O/ncu timeout 100 scripts/ncu_profile.sh qm16 mla_decode_qm "$R --heads 128"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
