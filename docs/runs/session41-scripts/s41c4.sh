# session 41 call 4: gpu_decode_test with the new Q edge case (Spec::q_elem0: element 0 of every
# bf16 Q row at 3.39e38) on the shipped code objects, and on a copy whose bf16-Q register-A cubin
# is session 40's (8d26120d, the exponent with the 3e38 bound), which the case must fail.
#   build-lead/tools/var/raold: code objects with the ra bf16/fp8 cubin rebuilt from e1ec483
# carry: build-lead/{src,codeobjects,tools,tests/gpu}
NAME=s41c4 . scripts/call_env.sh
echo "== shipped ($SECONDS s)"; timeout 240 build-lead/tests/gpu/gpu_decode_test 2>&1 | tail -4
echo "== session 40's ra bf16/fp8 ($SECONDS s)"
MLA_CODEOBJECT_DIR=$PWD/build-lead/tools/var/raold/codeobjects timeout 240 build-lead/tests/gpu/gpu_decode_test 2>&1 | grep -E "FAIL|q\[0\]|cases" | head -8
echo "done ($SECONDS s)"
