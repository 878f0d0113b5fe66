# session 40 call 3: the register-A ring in TMA boxes (MLA_RA_VSWAP 3: five 128-byte column blocks
# of the 64 token rows, 128-byte swizzle, token map 3; the cache's fp8 tensor map, launch_kv_tma 1;
# cp.async into the same layout below page 8), against the shipped 576-byte rows.
#   build-lead: the working tree (ra fp8/fp8 d9843b77, ra bf16/fp8 b0f8d30d; launch_smem 180,000 /
#               188,192; launch_kv_tma 1)
#   build-lead/tools/var/cp: build-lead's code objects with launch_kv_tma 0 on the ra rows (the
#               cp.async loader at every page size)
#   build-lead/tools/var/base: the whole build of 6b3e975 (the shipped kernels)
# carry: build-lead/{src,codeobjects,tools}
NAME=s40c3 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects
for a in "--dtype fp8" "--kv-dtype fp8"; do
  checks $B "$a" "$a --page-size 16" "$a --page-size 1" "$a --page-size 8 --heads 8 --qlen 2" "$a --heads 8 --qlen 2 --page-size 32" "$a --long-first 8" "$a --heads 4 --qlen 4 --page-size 128"
  checks $S/cp "$a" "$a --page-size 16 --heads 8 --qlen 2"
done
echo "== sanitizers ($SECONDS s)"
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --dtype fp8 --heads 8 --qlen 2 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --kv-dtype fp8 --page-size 1 --check 2 --iters 1 2>&1 | tail -1
MLA_CODEOBJECT_DIR=$PWD/$S/cp/codeobjects timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --kv-dtype fp8 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck $T run --batch 4 --kv-len 2000 --varlen --dtype fp8 --check 2 --iters 1 2>&1 | tail -1
R="--batch 128 --kv-len 4096 --fixed --iters 20"
for a in "--dtype fp8" "--kv-dtype fp8"; do
  echo "== A/B $a ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R $a" $S/base $B $S/cp/codeobjects
done
echo "== A/B page 1 ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "$R --dtype fp8 --page-size 1" $S/base $B
echo "== A/B varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 --dtype fp8" $S/base $B
echo "== ncu ($SECONDS s)"
OUT=$O/ncu timeout 100 scripts/ncu_profile.sh box8 mla_decode_ra "$R --dtype fp8"
(cd $O && tar czf ncu.tgz ncu/*-details.txt ncu/*-sass.csv && rm -rf ncu)
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
