#!/usr/bin/env bash
# Device runs 11b (ALT=3) and 11c (ALT=8), one H200: tp_loopback_micro A/B,
# alternating the binary built at c5f667a (hand-written copy-engine form and
# launcher; the same bench source, with the `engine` rows) and the one built
# from this change. Compare with ../../2026-12-01-ir-emit-throughput/scripts/tpcmp.py <dir>.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/r11; R=$OUT/r11c; ALT=${ALT:-8}; mkdir -p $R; nvidia-smi -L > $R/device.txt
for i in $(seq 1 $ALT); do
  timeout 100 $F/tp_loopback_micro_legacy > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 100 $F/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
done
grep -h "rc=\|FAIL" $R/tp.*.log | sort | uniq -c
tar czf $OUT/r11c.tgz -C $OUT r11c
