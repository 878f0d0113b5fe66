# session 41 call 1: the fp8 qm kernel with O^T on the fp8 tensor cores (MLA_QM8_P8 1: P^T as e4m3,
# aiter's fp8-Q rounding; V^T fragments of raw bytes by 4 x 4 byte transposes; 8 QGMMA m64n64k32 a
# warpgroup half a tile instead of 16 HGMMA m64n64k16), checked against the reference with and
# without P rounded to e4m3, and timed against the shipped kernel.
#   build-lead/tools/var/p8: code objects with the P8 qm fp8/fp8 cubin (245 registers, no spill)
# carry: build-lead/{src,codeobjects,tools}
NAME=s41c1 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
for h in "--heads 64" "--heads 128" "--heads 128 --page-size 16" "--heads 32 --qlen 2" "--heads 16 --qlen 4 --page-size 8" "--heads 128 --long-first 8"; do
  checks $S/p8 "$a $h" "$a $h --ref-p-fp8"
done
checks $B "$a --heads 128" "$a --heads 128 --ref-p-fp8"
echo "== sanitizers ($SECONDS s)"
export MLA_CODEOBJECT_DIR=$PWD/$S/p8/codeobjects
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen $a --heads 128 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --varlen $a --heads 64 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a --heads 128" $B $S/p8
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=2 timeout 60 $V run "$R $a --heads 64" $B $S/p8
echo "== A/B fp8 128 heads varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $a --heads 128" $B $S/p8
echo "== ncu ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/p8/codeobjects OUT=$O/ncu timeout 100 scripts/ncu_profile.sh p8 mla_decode_qm "$R $a --heads 128"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
