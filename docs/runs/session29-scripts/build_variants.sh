#!/usr/bin/env bash
# session 29: variant cubins under build-lead/tests/gpu/s29/NAME/ (carried; small), each source
# rebuilt with the project's nvcc flags plus FLAGS. On the GPU machine, `assemble NAME...` makes
# /tmp/s29/NAME/codeobjects = build-lead/codeobjects with NAME's cubins in place.
#   build_variants.sh NAME "FLAGS" SRC...   (SRC: codeobjects/sm_90a/decode/*.cu)
#   build_variants.sh assemble NAME...
set -eu
if [ "$1" = assemble ]; then
  shift
  for name in "$@"; do
    rm -rf /tmp/s29/$name; mkdir -p /tmp/s29/$name
    cp -r build-lead/codeobjects /tmp/s29/$name/codeobjects
    cp build-lead/tests/gpu/s29/$name/*.cubin /tmp/s29/$name/codeobjects/sm_90a/decode/
  done
  exit 0
fi
name=$1 flags=$2; shift 2
out=build-lead/tests/gpu/s29/$name
rm -rf "$out"; mkdir -p "$out"
for src in "$@"; do
  /usr/local/cuda/bin/nvcc -gencode=arch=compute_90a,code=sm_90a --cubin -O3 -std=c++17 -lineinfo \
    -Xptxas=-warn-spills,-warn-lmem-usage,-Werror -I codeobjects/sm_90a $flags "$src" \
    -o "$out/$(basename "${src%.cu}").cubin" &
done
wait
echo "$out"
