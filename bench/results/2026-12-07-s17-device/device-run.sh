#!/usr/bin/env bash
# Session 17's device run (one GPU, ranks as threads sharing it). Pack
# (.gpu/, ignored): pack17.txz = the GPU programs and libpurlin.so of the
# commit under test (scripts/pack-gpu.sh of a slim gpu-bin).
#   device-run.sh STEP...
#     fused:  tests/gpu/fused_rmsnorm_test at 1, 2, 3, 5 ranks (--bench at 2)
#     pyfused: python/tests/test_gpu_fused.py
#     fbench: bench/coll/fused_rmsnorm_bench.py, 2 ranks (tokens 1,8,32,128)
#             and 3 ranks (1,8,32: 128 tokens pass the 3-rank latency bound)
#     pygpu:  python/tests/test_gpu.py (the every-dtype test) and
#             test_gpu_device_counts.py
#     moe:    bench/coll/moe_device_counts.py, 2 ranks
#     dc:     device_counts_test at 2, 3, 5 ranks
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -d .gpu/packtest ] || tar -C .gpu -xJf .gpu/pack17.txz || exit 1
P=.gpu/packtest
export PYTHONPATH=$R/python PURLIN_LIBRARY=$R/$P/libpurlin.so PURLIN_REQUIRE_LIBRARY=1
echo "pack: $(head -1 $P/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in "$@"; do
  case $s in
    fused) for k in 1 2 3 5; do
             timeout ${FUSED_T:-100} $P/fused_rmsnorm_test --ranks $k $([ $k = 2 ] && echo --bench) > "$OUT/fused-$k.txt" 2>&1
             echo "fused_rmsnorm_test $k ranks rc=$? pass=$(grep -c ^PASS "$OUT/fused-$k.txt") fail=$(grep -c FAIL "$OUT/fused-$k.txt")"
             grep -E "FAIL|BENCH" "$OUT/fused-$k.txt" | head -8 | cut -c1-300
           done;;
    pyfused) timeout ${PYT:-200} python3 -m pytest -q -o faulthandler_timeout=90 python/tests/test_gpu_fused.py > "$OUT/pyt-fused.txt" 2>&1
             echo "pytest fused rc=$?"; tail -3 "$OUT/pyt-fused.txt" | cut -c1-300;;
    fbench) timeout ${FB_T:-150} python3 bench/coll/fused_rmsnorm_bench.py "$OUT/fused-bench-2.json" --ranks 2 --tokens 1,8,32,128 > "$OUT/fused-bench-2.txt" 2>&1
            echo "fbench 2 rc=$?"; tail -6 "$OUT/fused-bench-2.txt"
            timeout ${FB_T:-150} python3 bench/coll/fused_rmsnorm_bench.py "$OUT/fused-bench-3.json" --ranks 3 --tokens 1,8,32 > "$OUT/fused-bench-3.txt" 2>&1
            echo "fbench 3 rc=$?"; tail -5 "$OUT/fused-bench-3.txt";;
    pygpu) timeout ${PYG:-300} python3 -m pytest -q -rs -o faulthandler_timeout=120 python/tests/test_gpu.py python/tests/test_gpu_device_counts.py > "$OUT/pyt-gpu.txt" 2>&1
           echo "pytest gpu rc=$?"; grep -E "passed|failed|FAILED" "$OUT/pyt-gpu.txt" | tail -12 | cut -c1-300;;
    moe) timeout ${MOE_T:-150} python3 bench/coll/moe_device_counts.py "$OUT/moe.json" --ranks 2 --tokens ${MOE_TOKENS:-1,16,64,256} > "$OUT/moe.txt" 2>&1
         echo "moe rc=$?"; tail -8 "$OUT/moe.txt";;
    dc) for k in 2 3 5; do
          timeout ${DC_T:-90} $P/device_counts_test --ranks $k > "$OUT/dc-$k.txt" 2>&1
          echo "device_counts_test $k ranks rc=$? pass=$(grep -c '^PASS' "$OUT/dc-$k.txt") fail=$(grep -c '^FAIL' "$OUT/dc-$k.txt")"
        done;;
  esac
done
