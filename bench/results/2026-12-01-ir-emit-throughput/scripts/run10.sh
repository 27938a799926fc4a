#!/usr/bin/env bash
# Device run 10 (one H200): the final binaries of this session (build/, sm_80 + sm_90,
# commit 11bd16b): oversub 2..8 ranks, the demo and the collective tests on one GPU,
# reduce_pair_test, lat_floor_micro --loopback (latency kernels unchanged), and the
# tp_loopback_micro A/B against cfcd7a0 (3 alternations).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/final; R=$OUT/r10; mkdir -p $R
nvidia-smi -L > $R/device.txt
for n in 2 3 4 5 8; do timeout 100 $F/oversub_test --ranks $n > $R/oversub.$n.log 2>&1; echo "rc=$?" >> $R/oversub.$n.log; done
grep -h "oversub_test:" $R/oversub.*.log | sort | uniq -c | sort -rn | head -20
for t in demo_allreduce_test coll_correctness_test reduce_pair_test; do timeout 200 $F/$t > $R/$t.log 2>&1; echo "$t rc=$?" | tee -a $R/$t.log; tail -n 3 $R/$t.log; done
timeout 120 $F/lat_floor_micro --only rt- --loopback > $R/lat_floor_loopback.log 2>&1; echo "lat_floor rc=$?"
for i in 1 2 3; do
  timeout 120 .gpu/ab/tp_loopback_micro_legacy > $R/tp.legacy.$i.log 2>&1; echo "rc=$?" >> $R/tp.legacy.$i.log
  timeout 120 $F/tp_loopback_micro > $R/tp.new.$i.log 2>&1; echo "rc=$?" >> $R/tp.new.$i.log
done
grep -h "tp_loopback_micro:" $R/tp.*.log | sort | uniq -c
tar czf $OUT/run10-logs.tgz -C $OUT r10
