#!/usr/bin/env bash
# Session 13's device run (one GPU; ranks as threads or torchrun processes
# sharing it). Carried (.gpu/): pack.txz (this commit's GPU programs and
# libpurlin.so, without the microbenchmarks), purlinc.txz (purlinc linked
# statically: -DPURLIN_STATIC_PURLINC=ON; the device has no Clang) and
# tma.txz (atom tests, atom_local_micro and the cp.async / HopperTma
# libraries of bench/results/2026-12-05-tma/build-datapath-library.sh).
#   device-run.sh STEP...
#     suite:  gpu-all.sh's test steps (STEPS, a grep -E of step names)
#     pytest: python/tests, with purlinc for purlin.jit and torchrun for the
#             torch.distributed backend (test_dist.py)
#     vmm:    vmm_test (cuMem buffers: threads, then 2 processes)
#     bench:  coll_bench --threads 2 --nccl none, a short sweep (its columns, plans.log)
#     tma:    bench/results/2026-12-05-tma/device-run.sh (atom tests, the
#             local micro, Python tests on HopperTma, program_bandwidth x2)
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" || exit 1
[ -d packtest ] || tar xJf pack.txz
[ -d purlinc ] || tar xJf purlinc.txz
cd "$R"
echo "pack: $(head -1 .gpu/packtest/COMMIT)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=.gpu/packtest
for s in "$@"; do
  case $s in
    suite) timeout ${SUITE_T:-240} bash scripts/gpu-all.sh $P --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|queue_alias)}" > "$OUT/suite.txt" 2>&1
           echo "suite rc=$?"; tail -22 "$OUT/suite.txt";;
    pytest) .gpu/purlinc/purlinc --version | head -1
            PURLINC=$R/.gpu/purlinc/purlinc PURLIN_JIT_CACHE=/tmp/jit-cache PURLIN_LIBRARY=$R/$P/libpurlin.so \
              PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-420} python3 -m pytest -q -rs -o faulthandler_timeout=300 \
              ${PYTESTS:-python/tests} > "$OUT/pytest.txt" 2>&1
            echo "pytest rc=$?"; grep -E "passed|failed|SKIPPED|FAILED|Error" "$OUT/pytest.txt" | tail -20;;
    vmm) timeout 150 $P/vmm_test > "$OUT/vmm_test.txt" 2>&1; echo "vmm_test rc=$?"; grep -E "PASS|FAIL" "$OUT/vmm_test.txt" | head -20;;
    bench) mkdir -p "$OUT/bench"
           timeout 120 $P/coll_bench "$OUT/bench" --threads 2 --nccl none -b 1K -e 64M -f 8 --reps 5 > "$OUT/bench/console.txt" 2>&1
           echo "coll_bench rc=$?"; head -30 "$OUT/bench/console.txt"; wc -l "$OUT/bench/plans.log"; head -3 "$OUT/bench/plans.log";;
    tma) PYTEST_ADDOPTS="--ignore=python/tests/test_dist.py" PB_LIBS="cpasync tmalib cpasync tmalib" bash "$R/bench/results/2026-12-05-tma/device-run.sh";;
  esac
done
