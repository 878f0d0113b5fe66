# scripts/call_env.sh - the shared start of a device call's script (docs/runs/session*-scripts/),
# sourced from the repository root on the GPU machine:
#
#   NAME=s40c1 . scripts/call_env.sh
#
# tees everything the script prints to $OUT/$NAME.txt (OUT default /tmp/out), points the library
# and the tool at $BUILD (default build-lead: carry $BUILD/src, $BUILD/tools, $BUILD/codeobjects),
# prints the GPU's name and clocks, and defines:
#   T, V            the tool ($BUILD/tools/mla/mla) and scripts/variant_bench.sh
#   runv DIR ARGS   `mla ARGS` (40 s at most) under variant folder DIR: a whole build (DIR/src,
#                   DIR/tools/mla/mla, DIR/codeobjects) runs with its own library and tool, a
#                   code-object folder (DIR/codeobjects, or DIR itself) with $BUILD's
#   checks DIR ARGSET...  for each ARGSET, `mla run --batch 24 --kv-len 3000 --varlen ARGSET
#                   --check -1 --iters 2` under DIR (every request against the CPU reference),
#                   printing the check lines and any failure
#   gpu_check_and_targets  scripts/gpu_check.sh on $BUILD (logs in $O/gc.tgz; carry also
#                   $BUILD/tests/{planner,core,cp,gpu} and $BUILD/examples), then
#                   `mla bench --targets` (also in $O/targets.txt)
set -u
O=${OUT:-/tmp/out}
mkdir -p "$O"
exec > >(tee "$O/${NAME:?set NAME to the call name}.txt") 2>&1
BUILD=${BUILD:-build-lead}
export LD_LIBRARY_PATH=$PWD/$BUILD/src MLA_CODEOBJECT_DIR=$PWD/$BUILD/codeobjects
T=$BUILD/tools/mla/mla
V=scripts/variant_bench.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
runv() {
    local d=$1
    shift
    if [ -e "$d/src/libmla.so.0" ] && [ -x "$d/tools/mla/mla" ]; then
        LD_LIBRARY_PATH=$PWD/$d/src MLA_CODEOBJECT_DIR=$PWD/$d/codeobjects timeout 40 "$d/tools/mla/mla" "$@"
    else
        local c=$d
        [ -d "$d/codeobjects" ] && c=$d/codeobjects
        MLA_CODEOBJECT_DIR=$PWD/$c timeout 40 "$T" "$@"
    fi
}
checks() {
    local d=$1 a
    shift
    for a in "$@"; do
        echo "== check $d $a"
        # shellcheck disable=SC2086  # the argument set split into the tool's flags
        runv "$d" run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
    done
}
gpu_check_and_targets() {
    echo "== gpu_check ($SECONDS s)"
    BUILD=$BUILD OUT=$O/gc PLAN_SWEEP=100 timeout 330 scripts/gpu_check.sh 2>&1 | tail -48
    (cd "$O" && tar czf gc.tgz gc && rm -rf gc)
    echo "== targets ($SECONDS s)"
    timeout 130 "$T" bench --targets 2>&1 | tee "$O/targets.txt"
}
