#!/usr/bin/env bash
# Device run 8 (one H200): a second same-session A/B of tp_loopback_micro
# (printed vs hand-written at cfcd7a0), 6 alternations, to check the direct
# AllToAll 4 MiB row of run 7 (+2.5%).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
B=.gpu/ab; R=$OUT/r8; mkdir -p $R
for i in 1 2 3 4 5 6; do
  timeout 120 $B/tp_loopback_micro_legacy > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 120 $B/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
done
grep -h "PASS\|FAIL" $R/*.log | sort | uniq -c
tar czf $OUT/run8-logs.tgz -C $OUT r8
