#!/bin/bash
# Device run 18 (one H200, 2026-12-02): vform_test and rooted_test at 2, 3,
# 5 and 8 ranks sharing the GPU, oversub_test (4 and 8; 2, 3, 5), and a
# mutant of generated/alltoallv.cu (each poll uses the send flow's length)
# that vform_test must catch. Binaries: build-sm90 (sm_90), stripped, in .gpu/r18.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/r18; R=$OUT/r; mkdir -p $R; nvidia-smi -L > $R/device.txt
for k in 2 3 5 8; do timeout 140 $F/vform_test --ranks $k > $R/vform.$k.log 2>&1; echo "rc=$?" >> $R/vform.$k.log; done
for k in 2 3 5 8; do timeout 150 $F/rooted_test --ranks $k > $R/rooted.$k.log 2>&1; echo "rc=$?" >> $R/rooted.$k.log; done
timeout 200 $F/oversub_test > $R/oversub.log 2>&1; echo "rc=$?" >> $R/oversub.log
for k in 2 3 5; do timeout 150 $F/oversub_test --ranks $k > $R/oversub.$k.log 2>&1; echo "rc=$?" >> $R/oversub.$k.log; done
timeout 120 $F/vform_mutC --ranks 3 > $R/mutC.3.log 2>&1; echo "rc=$?" >> $R/mutC.3.log
cd $OUT && tar czf run18.tgz r && rm -rf r
