# session 42 call 5: the shipped tree's bf16 qm cubin (the fast softmax, 8020ab47) on shapes with
# padding rows and causal MTP rows (the review's test gap: warps whose rows lie past nrows or whose
# causal limit falls inside a tile must take the masked path), every request against the CPU
# reference; the same shapes on session 41's cubin for the error sizes.
# carry: build-lead/{src,codeobjects,tools}
NAME=s42c5 . scripts/call_env.sh
S=build-lead/tools/var; B=build-lead/codeobjects
for d in $B $S/ship; do
  checks $d "--heads 16 --qlen 3" "--heads 16 --qlen 3 --page-size 16" "--heads 32 --qlen 3" "--heads 128 --qlen 3" "--heads 64 --qlen 4 --long-first 8" "--heads 128 --page-size 1"
done
echo "done ($SECONDS s)"
