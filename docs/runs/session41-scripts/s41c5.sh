# session 41 call 5: warpgroup 0 issues S(t + 1) before its own O^T half of tile t (MLA_QM8_EARLY 1,
# one S chain, pv_half without the load-ahead; 255 registers, no spill; fp8 qm fecb46ed). The
# carried build-lead/codeobjects holds the EARLY cubin, so gpu_check runs it; the shipped code
# objects ride as build-lead/tools/var/ship for the A/B.
# carry: build-lead/{src,codeobjects,tools,tests/gpu}
NAME=s41c5 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects; a="--dtype fp8"
checks $B "$a --heads 128" "$a --heads 64 --page-size 16" "$a --heads 16 --qlen 4 --page-size 8" "$a --heads 128 --long-first 8"
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B fp8 128 heads ($SECONDS s)"; ROUNDS=2 timeout 70 $V run "$R $a --heads 128" $S/ship/codeobjects $B
echo "== A/B fp8 64 heads ($SECONDS s)"; ROUNDS=1 timeout 30 $V run "$R $a --heads 64" $S/ship/codeobjects $B
echo "== gpu_check, the decode test only (the device budget left: 385 s) ($SECONDS s)"
BUILD=build-lead OUT=$O/gc ONLY='^decode_test$' timeout 170 scripts/gpu_check.sh 2>&1 | tail -6
(cd "$O" && tar czf gc.tgz gc && rm -rf gc)
echo "done ($SECONDS s)"
