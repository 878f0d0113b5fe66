# session 37 call 4: (a) the seesaw with warpgroup 1's P.V back to back, P0 first (-DMLA_QM_SS_ORDER=2
# -DMLA_QM_SS_STAGGER=1: ss2s 0ef2a844; chain alone with -DMLA_QMT_ABLATE=2: ss2sa 12d75e1c) against
# call 3's builds (t1, sssa, sss, ssbs) at 128 and 64 heads; (b) synccheck on the seesaw bodies with
# the whole report (call 3's synccheck of ssbs ended "Target application returned an error");
# (c) the target table and host cost on the shipped cubins (unchanged since 5ee1553).
#   builds: as s37c3.sh's header; carry: build-lead/{src,codeobjects,tools}, build-var/s37
set -u
O=${OUT:-/tmp/out}; mkdir -p $O
exec > >(tee $O/s37c4.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
T=build-lead/tools/mla/mla; V=scripts/variant_bench.sh; F="--fixed"; B=build-var/s37
left() { [ $SECONDS -lt $1 ] || { echo "(stopped at $SECONDS s: no time left)"; exit 0; }; }
for a in "--heads 128" "--heads 64" "--heads 128 --qlen 2" "--heads 64 --page-size 16" "--heads 128 --long-first 9"; do
  echo "== check ss2s $a"; MLA_CODEOBJECT_DIR=$B/ss2s/codeobjects timeout 30 $T run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
done
for v in ssbs sss ss2s; do
  echo "== synccheck $v ($SECONDS s)"; MLA_CODEOBJECT_DIR=$B/$v/codeobjects timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 64 --error-exitcode 9 $T run --batch 4 --kv-len 16384 --heads 64 --iters 1 --check 2 > $O/synccheck_$v.log 2>&1; echo "rc $?"; grep -vE "^\s*$" $O/synccheck_$v.log | head -12; tail -3 $O/synccheck_$v.log
done
for h in 128 64; do
  echo "== $h heads ($SECONDS s)"; ROUNDS=2 timeout 100 $V run "--batch 128 --kv-len 4096 --heads $h $F --iters 20" $B/t1/codeobjects $B/sssa/codeobjects $B/ss2sa/codeobjects $B/sss/codeobjects $B/ssbs/codeobjects $B/ss2s/codeobjects
done
left 220; echo "== targets ($SECONDS s)"; timeout 110 $T bench --targets 2>&1 | tee $O/targets.txt
echo "== host cost, main job fixed (one launch)"; timeout 20 $T run --fixed --check 0 --iters 20 2>&1 | grep -E "host cost"
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
