#!/usr/bin/env bash
# Device run 15 (one H200): rooted_test at 2, 3, 5 and 8 ranks sharing the
# GPU (default lazy module loading, the test's set-up barrier), three times
# each; the two demos (two ranks on the GPU, through the generated host API);
# oversub_test at 3, 5 and 8 ranks.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/r14; R=$OUT/r15; mkdir -p $R; nvidia-smi -L > $R/device.txt
for i in 1 2 3; do for k in 2 3 5 8; do
  timeout 120 $F/rooted_test --ranks $k > $R/rooted.$k.$i.log 2>&1; echo "rc=$?" >> $R/rooted.$k.$i.log
  echo "rooted n=$k run$i: $(tail -n 3 $R/rooted.$k.$i.log | tr '\n' ' ')"
done; done
for d in demo_rooted_test demo_allreduce_test; do
  timeout 200 $F/$d > $R/$d.log 2>&1; echo "rc=$?" >> $R/$d.log; echo "$d: $(tail -n 2 $R/$d.log | tr '\n' ' ')"
done
for k in 3 5 8; do
  timeout 150 $F/oversub_test --ranks $k > $R/oversub.$k.log 2>&1; echo "rc=$?" >> $R/oversub.$k.log; echo "oversub n=$k: $(tail -n 2 $R/oversub.$k.log | tr '\n' ' ')"
done
tar czf $OUT/r15.tgz -C $OUT r15 && rm -rf $R
