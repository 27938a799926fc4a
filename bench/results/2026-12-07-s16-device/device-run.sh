#!/usr/bin/env bash
# Session 16's device run (one GPU, ranks as threads sharing it). Packs
# (.gpu/, ignored): pack.txz = the GPU programs and libpurlin.so of the
# commit under test (scripts/pack-gpu.sh of a slim gpu-bin), prev.txz =
# e564c9d's libpurlin.so and latency micros (before session 15's kernel
# changes), purlinc.txz (static purlinc, for purlin.jit).
#   device-run.sh STEP...
#     dc:     device_counts_test (issue 37: V counts in device memory), 2/3/5 ranks
#     vform:  vform_test --ranks 2, 3, 5 (after vform_cases.cuh was split out)
#     moe:    bench/coll/moe_device_counts.py (MoE dispatch + combine: host
#             splits + sync, device splits, a graph of the device form)
#     atom, pytest, ab, pairs, suite: session 15's steps (../2026-12-07-s15-device)
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$R/.gpu" && { [ -d packtest ] || tar xJf pack.txz; } && cd "$R"
P=.gpu/packtest
echo "pack: $(head -1 $P/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in "$@"; do
  case $s in
    dc) for k in 2 3 5; do
          timeout ${DC_T:-120} $P/device_counts_test --ranks $k > "$OUT/dc-$k.txt" 2>&1
          echo "device_counts_test $k ranks rc=$? pass=$(grep -c '^PASS' "$OUT/dc-$k.txt") fail=$(grep -c '^FAIL' "$OUT/dc-$k.txt")"
          grep -E "^FAIL|failure\(s\)" "$OUT/dc-$k.txt" | head -8
        done;;
    vform) for k in 2 3 5; do
          timeout ${VF_T:-100} $P/vform_test --ranks $k > "$OUT/vform-$k.txt" 2>&1
          echo "vform_test $k ranks rc=$? pass=$(grep -c '^PASS' "$OUT/vform-$k.txt") fail=$(grep -c '^FAIL' "$OUT/vform-$k.txt")"
          grep -E "^FAIL" "$OUT/vform-$k.txt" | head -5
        done;;
    moe) PYTHONPATH=$R/python PURLIN_LIBRARY=$R/$P/libpurlin.so timeout ${MOE_T:-200} python3 \
           bench/coll/moe_device_counts.py "$OUT/moe.json" --ranks 2 --tokens ${MOE_TOKENS:-1,16,64,256} 2>&1 | tee "$OUT/moe.txt" | tail -8
         echo "moe rc=${PIPESTATUS[0]}";;
    *) bash "$R/bench/results/2026-12-07-s15-device/device-run.sh" "$s";;
  esac
done
