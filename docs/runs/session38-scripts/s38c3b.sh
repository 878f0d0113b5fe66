# session 38 call 3's two warm follow-ups (run as one-line commands on the warm machine after
# s38c3.sh; recorded here as run). Carry: build-lead/{src,codeobjects,tools}, build-var/s38c.
# (b) synccheck with more tracked barriers, at gpu_check's synccheck_64heads shape, and the shipped
#     body at b 1 with 1024 (its output only in the call's reply: "ERROR SUMMARY: 0 errors"):
export LD_LIBRARY_PATH=$PWD/build-lead/src; S=/tmp/s38
for n in sss s3s; do rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects; cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv; cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/; done
for c in "sss 1024" "s3s 1024" "s3s 16384"; do set -- $c; echo "== synccheck $1 nb $2"; MLA_CODEOBJECT_DIR=$S/$1/codeobjects timeout 100 compute-sanitizer --tool synccheck --num-cuda-barriers $2 --error-exitcode 9 build-lead/tools/mla/mla run --batch 4 --kv-len 16384 --heads 64 --iters 1 --check 2 > $OUT/sc_$1_$2.log 2>&1; echo "rc $?"; grep -v "^=* *$" $OUT/sc_$1_$2.log | tail -4; done
echo "== shipped default nb, b1"; MLA_CODEOBJECT_DIR=$PWD/build-lead/codeobjects timeout 60 compute-sanitizer --tool synccheck --num-cuda-barriers 1024 --error-exitcode 9 build-lead/tools/mla/mla run --batch 1 --kv-len 256 --heads 64 --iters 1 --check -1 2>&1 | tail -3
# (c) the ncu profiles of t1 and sss again (s38c3.sh's came back only in part: eight files a call)
for n in t1 sss; do rm -rf $S/$n; mkdir -p $S/$n; cp -r build-lead/codeobjects $S/$n/codeobjects; cp build-var/s38c/mla_decode_t1.csv $S/$n/codeobjects/sm_90a/decode/mla_decode.csv; [ -d build-var/s38c/$n ] && cp build-var/s38c/$n/*.cubin $S/$n/codeobjects/sm_90a/decode/; done
for v in t1 sss; do MLA_CODEOBJECT_DIR=$S/$v/codeobjects OUT=/tmp/ncu timeout 150 scripts/ncu_profile.sh $v mla_decode_qm "--batch 128 --kv-len 4096 --heads 128 --fixed"; cp /tmp/ncu/$v-details.txt /tmp/ncu/$v-sass.csv $OUT/; done
