# session 43 call 1: the 2-CTA multicast pair (MLA_QM_MC 1, launch_cluster 2) re-measured on the
# current bf16 qm TMA body, with the body's loads alone and chain alone.
#   build-lead/tools/var/mc:   bf16 qm, -DMLA_QM_MC=1; table: launch_cluster 2 on the qm bf16 rows (1573fc8b)
#   build-lead/tools/var/mcnc: the same cubin under the shipped table (no clusters: the code's cost)
#   build-lead/tools/var/mcl:  mc with -DMLA_QMT_ABLATE=1 (no MMAs: the pair's loads alone), cluster table
#   build-lead/tools/var/l1:   shipped source with -DMLA_QMT_ABLATE=1 (the loads alone)
#   build-lead/tools/var/nl:   shipped source with -DMLA_QMT_ABLATE=2 (no KV loads: the chain alone)
# carry: build-lead/{src,codeobjects,tools}
NAME=s43c1 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects
checks $S/mc "--heads 128" "--heads 128 --qlen 2 --page-size 16" "--heads 128 --long-first 8" "--heads 64" "--heads 128 --page-size 128"
echo "== check mc b 128 fixed"
runv $S/mc run --batch 128 --kv-len 4096 --fixed --heads 128 --check 16 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
echo "== sanitizers mc ($SECONDS s)"
export MLA_CODEOBJECT_DIR=$PWD/$S/mc/codeobjects
timeout 60 compute-sanitizer --tool memcheck $T run --batch 8 --kv-len 2000 --varlen --heads 128 --check 2 --iters 1 2>&1 | tail -1
timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 1024 $T run --batch 4 --kv-len 2000 --varlen --heads 128 --check 2 --iters 1 2>&1 | tail -1
export MLA_CODEOBJECT_DIR=$PWD/$B
R="--batch 128 --kv-len 4096 --fixed --iters 20"
echo "== A/B 128 heads ($SECONDS s)"; ROUNDS=3 timeout 120 $V run "$R --heads 128" $B $S/mc/codeobjects $S/mcnc/codeobjects
echo "== A/B 128 heads MTP 2 ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "$R --heads 128 --qlen 2" $B $S/mc/codeobjects
echo "== A/B 64 heads ($SECONDS s)"; ROUNDS=2 timeout 40 $V run "$R --heads 64" $B $S/mc/codeobjects
echo "== parts 128 heads ($SECONDS s)"; ROUNDS=2 timeout 80 $V run "$R --heads 128" $S/l1/codeobjects $S/mcl/codeobjects $S/nl/codeobjects
echo "== A/B 128 heads varlen ($SECONDS s)"; ROUNDS=1 timeout 40 $V run "--batch 128 --kv-len 4096 --varlen --iters 20 --heads 128" $B $S/mc/codeobjects
nvidia-smi --query-gpu=clocks.sm --format=csv,noheader
echo "done ($SECONDS s)"
