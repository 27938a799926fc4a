#!/usr/bin/env bash
# Device run 5 (one H200): issue 15 step 2 (throughput printed from the IR).
# oversub 2..8 ranks on the printed code; tp_loopback_micro A/B against the
# hand-written throughput program (cfcd7a0), interleaved, 3 runs each.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=.gpu/ab; R=$OUT/r5; mkdir -p $R
nvidia-smi -L > $R/device.txt
for n in 2 3 4 5 8; do timeout 100 $B/oversub_test --ranks $n > $R/oversub.$n.log 2>&1; echo "rc=$?" >> $R/oversub.$n.log; grep "oversub_test:\|^FAIL" $R/oversub.$n.log | head -8; done
for i in 1 2 3; do
  timeout 120 $B/tp_loopback_micro_legacy > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 120 $B/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
  tail -2 $R/tp.legacy.$i.log $R/tp.new.$i.log
done
tar czf $OUT/run5-logs.tgz -C $OUT r5
