# session 40 call 5: the fp8-Q register-A kernel with S^T from shared memory (MLA_RA_SSK 1: the
# box slots of MLA_RA_VSWAP 3, token map 0, K by descriptor, no K fragments in registers; ra
# fp8/fp8 4c42cd7d, 241 registers), checked and timed against the shipped kernel and call 3's
# box kernel (K from registers).
#   build-lead/tools/var/ssk: a whole build with MLA_RA_SSK 1 (fp8 ra rows launch_kv_tma 1,
#               launch_smem 180,000)
#   build-lead/tools/var/box: call 3's whole build (MLA_RA_VSWAP 3)
# carry: build-lead/{src,codeobjects,tools}
NAME=s40c5 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $S/ssk "$a" "$a --page-size 16" "$a --page-size 1" "$a --page-size 8 --heads 8 --qlen 2" "$a --heads 8 --qlen 2 --page-size 32" "$a --long-first 8" "$a --heads 4 --qlen 4 --page-size 128" "--kv-dtype fp8"
echo "== sanitizers ($SECONDS s)"
X=$S/ssk; export LD_LIBRARY_PATH=$PWD/$X/src MLA_CODEOBJECT_DIR=$PWD/$X/codeobjects
timeout 60 compute-sanitizer --tool memcheck $X/tools/mla/mla run --batch 8 --kv-len 2000 --varlen $a --heads 8 --qlen 2 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool memcheck $X/tools/mla/mla run --batch 8 --kv-len 2000 --varlen $a --page-size 1 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck $X/tools/mla/mla run --batch 4 --kv-len 2000 --varlen $a --check 2 --iters 1 2>&1 | tail -1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B $a ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a" $B $S/ssk $S/box
echo "== A/B varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 $a" $B $S/ssk
echo "== A/B page 16 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "$R $a --page-size 16" $B $S/ssk
echo "== ncu ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/$S/ssk/codeobjects BUILD=$S/ssk OUT=$O/ncu timeout 100 scripts/ncu_profile.sh ssk8 mla_decode_ra "$R $a"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
