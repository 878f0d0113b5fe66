#!/usr/bin/env bash
# session 27 call 4: ncu full profile (per-instruction stall samples) of the 32-row kernel on 16 x MTP 2
set -u
O=${OUT:-/tmp/out}
BUILD=build-lead OUT=$O timeout 150 scripts/ncu_profile.sh m32 mla_decode_wg "--batch 128 --kv-len 4096 --qlen 2 --fixed"
rm -f $O/m32.ncu-rep
grep -E "Duration|SM Frequency|DRAM Throughput|Registers Per|Issue Slots Busy|Tensor" $O/m32-details.txt | head -14
