#!/usr/bin/env bash
# scripts/variant_bench.sh - kernel variants for the performance log (docs/performance.md), in two
# steps, from the repository root:
#
#   scripts/variant_bench.sh build NAME SOURCE.cu [NVCC FLAGS...]
#       (build machine) copies $BUILD/codeobjects to build-var/NAME/codeobjects and rebuilds the
#       cubin of SOURCE (a .cu under <tree>/codeobjects/sm_90a/<family>/, its headers taken from
#       that tree: an older commit's via `git archive REV codeobjects | tar -x -C DIR`) with the
#       project's nvcc flags plus the extra ones, e.g. -DMLA_WG_ABLATE=4 or -DMLA_RA_SCHAINS=1.
#       The tables are unchanged, so the variant runs under the same rows (a variant may use less
#       shared memory than the row's launch_smem, never more).
#   scripts/variant_bench.sh table NAME TABLE COLUMN VALUE [KERNEL_REGEX]
#       (build machine) copies $BUILD/codeobjects to build-var/NAME/codeobjects and sets launch
#       column COLUMN of TABLE (e.g. decode/mla_decode.csv, under sm_90a/) to VALUE on every row
#       whose knl_name matches KERNEL_REGEX (default: every row); a column the table lacks is
#       added only when every row matches (a CSV row cannot leave one cell empty), and a regex
#       that matches no row fails. Same cubins: a table-only variant, e.g. `table l2none
#       decode/mla_decode.csv launch_kv_tma_l2 0`. VARIANT_DIR=DIR writes DIR/codeobjects
#       instead of build-var/NAME/codeobjects (scripts/gpu_check.sh's TileLoader copy).
#   scripts/variant_bench.sh run "MLA RUN ARGS" DIR...
#       (GPU machine; carry $BUILD/src, $BUILD/tools, $BUILD/codeobjects and build-var) times
#       `mla run ARGS --check 0` under each code-object DIR, alternating the DIRs for $ROUNDS rounds
#       so that drift of the machine hits every variant alike; prints each run as it ends
#       ("round R DIR T us", so a run cut short by a timeout still shows what it measured), then
#       the median over rounds and the rounds' figures, one line per DIR. A DIR that holds a whole build instead
#       (DIR/src/libmla.so.0, DIR/tools/mla/mla, DIR/codeobjects) runs with its own library and
#       tool: the way to compare kernels whose shared-memory layout differs, since a library
#       checks each row's launch_smem against the layout it was built with.
#   scripts/variant_bench.sh ncu "MLA RUN ARGS" KERNEL_REGEX DIR...
#       (GPU machine with Nsight Compute; same carry as run) the kernel durations of `mla run ARGS
#       --check 0` under each DIR as ncu measures them (gpu__time_duration.sum, --clock-control
#       none) for the kernels whose name matches KERNEL_REGEX (e.g. mla_decode): one line per DIR
#       with the median, minimum and maximum over the profiled launches, in µs. The way to place a
#       kernel's time without the reducer or the host: e.g. the MLA_WG_ABLATE builds
#       (kernels.md next steps 9).
#
# Example: scripts/variant_bench.sh run "--dtype fp8 --fixed --iters 30" build-lead/codeobjects \
#          build-var/ra4/codeobjects
set -eu
BUILD=${BUILD:-build-lead}

# The library, tool and code objects to run under DIR: $BUILD's library and tool with DIR's code
# objects, or DIR's own when DIR holds a whole build (DIR/src/libmla.so.0, DIR/tools/mla/mla).
# Paths come back absolute (a relative DIR is taken from the repository root). Until session 30
# the library fell back along its search order past a MLA_CODEOBJECT_DIR that is not a folder,
# so a wrong path timed the default code objects (session 29 call 1's A/Bs); it now fails.
paths_for() {
    [ -d "$1" ] || { echo "variant_bench: $1 is not a folder" >&2; exit 2; }
    local d b
    d=$(realpath -- "$1") b=$(realpath -m -- "$BUILD")
    lib=$b/src tool=$b/tools/mla/mla cos=$d
    if [ -e "$d/src/libmla.so.0" ] && [ -x "$d/tools/mla/mla" ]; then
        lib=$d/src tool=$d/tools/mla/mla cos=$d/codeobjects
    fi
}
cmd=${1:-}
case "$cmd" in
build)
    [ $# -ge 3 ] || { echo "usage: $0 build NAME SOURCE.cu [NVCC FLAGS...]" >&2; exit 2; }
    name=$2 src=$3
    shift 3
    family=$(basename "$(dirname "$src")")
    out=build-var/$name/codeobjects
    rm -rf "build-var/$name"
    mkdir -p "build-var/$name"
    cp -r "$BUILD/codeobjects" "$out"
    nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
    "$nvcc" -gencode=arch=compute_90a,code=sm_90a --cubin -O3 -std=c++17 -lineinfo \
        -Xptxas=-warn-spills,-warn-lmem-usage,-Werror -I "$(dirname "$(dirname "$src")")" "$@" "$src" \
        -o "$out/sm_90a/$family/$(basename "${src%.cu}").cubin"
    echo "$out"
    ;;
table)
    [ $# -ge 5 ] || { echo "usage: $0 table NAME TABLE COLUMN VALUE [KERNEL_REGEX]" >&2; exit 2; }
    name=$2 table=$3 column=$4 value=$5 regex=${6:-.}
    dir=${VARIANT_DIR:-build-var/$name}
    out=$dir/codeobjects
    rm -rf "$dir"
    mkdir -p "$dir"
    cp -r "$BUILD/codeobjects" "$out"
    python3 - "$out/sm_90a/$table" "$column" "$value" "$regex" <<'PY'
import csv, io, re, sys
path, column, value, regex = sys.argv[1:5]
rows = list(csv.reader(open(path)))
head, body = rows[0], [r for r in rows[1:] if r]
name = head.index("knl_name")
hit = [bool(re.search(regex, r[name])) for r in body]
if not any(hit):
    sys.exit(f"{path}: no row's knl_name matches {regex!r}")
if column not in head:
    if not all(hit):
        sys.exit(f"{path} has no {column} column; adding it needs every row to match {regex!r}")
    head.append(column)
    for r in body:
        r.append(value)
else:
    i = head.index(column)
    for r, h in zip(body, hit):
        if h:
            r[i] = value
out = io.StringIO()
csv.writer(out, lineterminator="\n").writerows([head] + body)
open(path, "w").write(out.getvalue())
print(f"{path}: {column} = {value} on {sum(hit)} of {len(body)} rows")
PY
    echo "$out"
    ;;
run)
    [ $# -ge 3 ] || { echo "usage: $0 run \"MLA RUN ARGS\" DIR..." >&2; exit 2; }
    args=$2
    shift 2
    rounds=${ROUNDS:-3}
    declare -A times
    for ((r = 0; r < rounds; ++r)); do
        for d in "$@"; do
            paths_for "$d"
            # shellcheck disable=SC2086
            us=$(LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MLA_CODEOBJECT_DIR="$cos" \
                "$tool" run $args --check 0 | sed -n 's/^  decode: \([0-9.]*\) us.*/\1/p')
            [ -n "$us" ] || { echo "no decode time for $d" >&2; exit 1; }
            times[$d]="${times[$d]:-} $us"
            echo "round $r $d $us us"  # as it comes: a run cut short by a timeout still shows what it measured
        done
    done
    for d in "$@"; do
        # shellcheck disable=SC2086  # the recorded times split into one per line
        med=$(printf '%s\n' ${times[$d]} | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
        printf '%-40s median %8s us   rounds:%s\n' "$d" "$med" "${times[$d]}"
    done
    ;;
ncu)
    [ $# -ge 4 ] || { echo "usage: $0 ncu \"MLA RUN ARGS\" KERNEL_REGEX DIR..." >&2; exit 2; }
    args=$2 regex=$3
    shift 3
    for d in "$@"; do
        paths_for "$d"
        # shellcheck disable=SC2086
        LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" MLA_CODEOBJECT_DIR="$cos" \
            ncu --clock-control none --metrics gpu__time_duration.sum --kernel-name "regex:$regex" \
            "$tool" run $args --check 0 2>&1 |
            awk '$1 == "gpu__time_duration.sum" {
                    v = $NF; gsub(",", "", v)
                    if ($2 == "msecond") v *= 1000; else if ($2 == "nsecond") v /= 1000
                    print v
                }' | sort -g |
            awk -v d="$d" '{ t[++n] = $1 }
                END {
                    if (n == 0) { printf "%-40s no kernel matched\n", d; exit 1 }
                    printf "%-40s median %8.2f us   min %8.2f   max %8.2f   (%d launches)\n", d, t[int((n + 1) / 2)],
                        t[1], t[n], n
                }' || exit 1
    done
    ;;
*)
    echo "usage: $0 build NAME SOURCE.cu [NVCC FLAGS...] | table NAME TABLE COLUMN VALUE [KERNEL_REGEX] |" \
        "run \"MLA RUN ARGS\" DIR... | ncu \"MLA RUN ARGS\" KERNEL_REGEX DIR..." >&2
    exit 2
    ;;
esac
