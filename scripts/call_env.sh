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
: "${NAME:?set NAME to the call name}"
O=${OUT:-/tmp/out}
mkdir -p "$O"
exec > >(tee "$O/$NAME.txt") 2>&1
# the log's tee ends when the script does: wait for it, so that its last lines reach $O
call_env_tee=$!
trap 'exec >&- 2>&-; wait "$call_env_tee"' EXIT
BUILD=${BUILD:-build-lead}
# (an absolute path as is, a relative one from the repository root)
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
export LD_LIBRARY_PATH=$(abs "$BUILD")/src MLA_CODEOBJECT_DIR=$(abs "$BUILD")/codeobjects
T=$BUILD/tools/mla/mla
V=scripts/variant_bench.sh
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm --format=csv,noheader
runv() {
    local d=$1
    shift
    if [ -e "$d/src/libmla.so.0" ] && [ -x "$d/tools/mla/mla" ]; then
        LD_LIBRARY_PATH=$(abs "$d")/src MLA_CODEOBJECT_DIR=$(abs "$d")/codeobjects timeout 40 "$d/tools/mla/mla" "$@"
    else
        local c=$d
        [ -d "$d/codeobjects" ] && c=$d/codeobjects
        MLA_CODEOBJECT_DIR=$(abs "$c") timeout 40 "$T" "$@"
    fi
}
checks() {
    local d=$1 a rc
    shift
    for a in "$@"; do
        echo "== check $d $a"
        # shellcheck disable=SC2086  # the argument set split into the tool's flags
        runv "$d" run --batch 24 --kv-len 3000 --varlen $a --check -1 --iters 2 2>&1 | grep -E "check:|FAIL|rror"
        # (a crash or the time limit prints no check line: say so with the tool's status)
        rc=${PIPESTATUS[0]}
        [ "$rc" -eq 0 ] || echo "  (mla run exited $rc)"
    done
}
gpu_check_and_targets() {
    echo "== gpu_check ($SECONDS s)"
    BUILD=$BUILD OUT=$O/gc PLAN_SWEEP=100 timeout 330 scripts/gpu_check.sh 2>&1 | tail -48
    (cd "$O" && tar czf gc.tgz gc && rm -rf gc)
    echo "== targets ($SECONDS s)"
    timeout 130 "$T" bench --targets 2>&1 | tee "$O/targets.txt"
}
