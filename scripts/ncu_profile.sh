#!/usr/bin/env bash
# scripts/ncu_profile.sh - Nsight Compute profile of one decode launch, for the variant log in
# docs/performance.md (GPU machine, from the repository root, with $BUILD/src, $BUILD/tools and
# $BUILD/codeobjects carried):
#
#   scripts/ncu_profile.sh NAME KERNEL_REGEX "MLA RUN ARGS"
#
# profiles the first launch whose kernel name matches KERNEL_REGEX in `mla run ARGS --check 0`
# with the full section set (clocks left alone: --clock-control none) and writes, under $OUT
# (default ./ncu): NAME.ncu-rep, NAME-details.txt (every section as text) and NAME-sass.csv (the
# SASS with per-instruction warp-stall samples, for reading offline without ncu).
set -eu
BUILD=${BUILD:-build-lead}
OUT=${OUT:-ncu}
[ $# -eq 3 ] || { echo "usage: $0 NAME KERNEL_REGEX \"MLA RUN ARGS\"" >&2; exit 2; }
name=$1 kre=$2 args=$3
mkdir -p "$OUT"
export MLA_CODEOBJECT_DIR=${MLA_CODEOBJECT_DIR:-$PWD/$BUILD/codeobjects}
export LD_LIBRARY_PATH="$PWD/$BUILD/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# shellcheck disable=SC2086  # ARGS split into the tool's flags
ncu --clock-control none --kernel-name "regex:$kre" --launch-count 1 --set full --import-source no \
    --export "$OUT/$name" --force-overwrite "$BUILD/tools/mla/mla" run $args --check 0 --iters 1 >"$OUT/$name-run.txt" 2>&1
ncu --import "$OUT/$name.ncu-rep" --page details >"$OUT/$name-details.txt" 2>&1
ncu --import "$OUT/$name.ncu-rep" --page source --csv --print-source sass >"$OUT/$name-sass.csv" 2>&1 || true
echo "$OUT/$name: $(grep -m1 -i 'Duration' "$OUT/$name-details.txt" | tr -s ' ')"
