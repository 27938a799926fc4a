#!/usr/bin/env bash
# Device run 3 (one H200), issue 18: the failure model's device code (checked
# waits by %globaltimer, FAILED signal, abort flag, call check; cold paths
# inlined) against the code before it (ca1fce8), alternating A B A B in one
# machine session: the latency kernels (lat_floor_micro --only rt- --loopback,
# scripts/gpu-ab-latency.sh, 6 runs per side) and the throughput / direct /
# copy-engine kernels (tp_loopback_micro, 4 runs per side). Then the GPU
# suite's remaining parts on the new binaries.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
A=.gpu/base; B=.gpu/b; R=$OUT/r3; mkdir -p $R
nvidia-smi -L > $R/device.txt
timeout 200 scripts/gpu-ab-latency.sh $A/lat_floor_micro $B/lat_floor_micro 6 $R/ab-latency --loopback | tail -n 40
for i in 1 2 3 4; do
  timeout 100 $A/tp_loopback_micro > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 100 $B/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
done
grep -h "rc=" $R/tp.*.log | sort | uniq -c
tar czf $OUT/run3-logs.tgz -C $OUT r3
