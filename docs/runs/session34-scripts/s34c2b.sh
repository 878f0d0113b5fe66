# session 34 call 2 (failed starts left too little device time for two calls: s34c2.sh and a
# final check call in one): gpu_check on the shipped set (call 1's dq cubins with i8dq's qm fp8 one, the
# defaults since c46cf82), the target table, the host cost, then s34c2.sh's A/Bs, trimmed, each
# started only while the call has time left (rq, st0, rqst0, q8r, o33: s34c2.sh's header).
#   cp docs/runs/session34-scripts/s34c2b.sh build-lead/tests/gpu/s34c2b.sh
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s34c2.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla
echo "== gpu_check"; BUILD=build-lead OUT=$O/gc PLAN_SWEEP=200 timeout 330 scripts/gpu_check.sh 2>&1 | tail -42
(cd $O && tar czf gc.tgz gc && rm -rf gc)
echo "== targets"; timeout 100 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; timeout 30 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
bash docs/runs/session29-scripts/build_variants.sh assemble rq st0 rqst0 o33 q8r
S=/tmp/s29; L=$PWD/build-lead/codeobjects; V=scripts/variant_bench.sh; F="--fixed"
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
chk() { echo "== check $1: $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $2 --check -1 --iters 2 2>&1 | grep -E "check|FAIL|rror"; }
left 470; for a in "--dtype bf16 --kv-dtype fp8 --heads 16" "--dtype fp8 --heads 16"; do chk rqst0 "$a"; done
left 470; echo "== fp8 16 heads"; ROUNDS=3 timeout 50 $V run "--batch 128 --kv-len 4096 --dtype fp8 $F --iters 30" $L $S/rq/codeobjects $S/rqst0/codeobjects
left 480; echo "== bf16 Q / fp8 KV"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --dtype bf16 --kv-dtype fp8 $F --iters 30" $L $S/rq/codeobjects $S/rqst0/codeobjects
left 500; chk q8r "--dtype fp8 --heads 16 --qlen 2"; echo "== fp8 16 x MTP 2"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 --dtype fp8 --qlen 2 $F --iters 30" $L $S/q8r/codeobjects
left 510; chk st0 "--heads 16"; echo "== main job"; ROUNDS=3 timeout 40 $V run "--batch 128 --kv-len 4096 $F --iters 30" $L $S/st0/codeobjects
left 530; echo "== b 64 s_k 1024"; ROUNDS=3 timeout 30 $V run "--batch 64 --kv-len 1024 $F --iters 50" $L $S/st0/codeobjects
left 540; echo "== b 1536 s_k 2048"; ROUNDS=1 timeout 50 $V run "--batch 1536 --kv-len 2048 $F --iters 8" $L $S/o33/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo done
