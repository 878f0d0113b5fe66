#!/usr/bin/env bash
# session 26 call 2: the carve-out variants
set -u
export LD_LIBRARY_PATH=$PWD/build-lead/src MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.max.mem --format=csv,noheader
V=scripts/variant_bench.sh
L=build-lead/codeobjects; R=build-var/s26/rc100/codeobjects; D=build-var/s26/dec100/codeobjects; B=build-var/s26/both100/codeobjects
echo "== b1"; ROUNDS=5 $V run "--batch 1 --kv-len 32768 --fixed --iters 30" $L $R $B $D
echo "== b1 128h"; ROUNDS=3 $V run "--batch 1 --kv-len 32768 --fixed --heads 128 --iters 30" $L $B
echo "== b3x300"; ROUNDS=3 $V run "--batch 3 --kv-len 300 --iters 30" $L $B
echo "== main"; ROUNDS=3 $V run "--batch 128 --kv-len 4096 --fixed --iters 30" $L $D $B
echo "== b64"; ROUNDS=3 $V run "--batch 64 --kv-len 1024 --fixed --iters 30" $L $D $B
echo "== sk16384"; ROUNDS=2 $V run "--batch 128 --kv-len 16384 --fixed --iters 20" $L $B
echo "== check"; MLA_CODEOBJECT_DIR=$PWD/$B build-lead/tools/mla/mla run --batch 1 --kv-len 32768 --fixed --iters 3 --check -1 | grep -E "check|decode:"
echo done
