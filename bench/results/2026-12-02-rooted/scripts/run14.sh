#!/usr/bin/env bash
# Device run 14 (one H200): rooted_test at 2, 3, 5 and 8 ranks sharing the
# GPU (host references), oversub_test at 2 and 4 ranks (the four unrooted
# collectives after the shared kinds.h change), then the tp_loopback_micro
# A/B: the binary built at e04c62f (legacy) alternating with this change's.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/r14; R=$OUT/r14; ALT=${ALT:-6}; mkdir -p $R; nvidia-smi -L > $R/device.txt
for k in 2 3 5 8; do
  timeout 150 $F/rooted_test --ranks $k > $R/rooted.$k.log 2>&1; echo "rc=$?" >> $R/rooted.$k.log; tail -n 2 $R/rooted.$k.log
done
for k in 2 4; do
  timeout 120 $F/oversub_test --ranks $k > $R/oversub.$k.log 2>&1; echo "rc=$?" >> $R/oversub.$k.log; tail -n 2 $R/oversub.$k.log
done
for i in $(seq 1 $ALT); do
  timeout 100 $F/tp_loopback_micro_legacy > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 100 $F/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
done
grep -h "rc=\|FAIL" $R/*.log | sort | uniq -c | head -40
tar czf $OUT/r14.tgz -C $OUT r14
