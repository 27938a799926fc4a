#!/usr/bin/env bash
# Device run 11a (one H200): oversub_test at 2, 3, 4, 5, 8 ranks on one GPU
# (pull, push and the copy-engine cases), binaries of build-sm90 at 36a1030's
# generated code (the printed copy-engine form and NAME_enqueue).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
F=.gpu/r11; R=$OUT/r11a; mkdir -p $R; nvidia-smi -L | tee $R/device.txt
for n in 2 3 4 5 8; do
  timeout 100 $F/oversub_test --ranks $n > $R/oversub.$n.log 2>&1; echo "rc=$?" >> $R/oversub.$n.log
  tail -n 2 $R/oversub.$n.log
done
tar czf $OUT/r11a.tgz -C $OUT r11a
