#!/usr/bin/env bash
# Session 6's last device call (little device time left): the host-time
# A/B (before/after the occupancy memo), the GPU suite and Python tests of
# the binaries of commit d83309e (.gpu/pack.txz: build/gpu-bin and
# libpurlin.so, sm_80 + sm_90), then the TMA steps (device-run.sh).
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && tar xJf host.txz && tar xJf pack.txz && cd "$R"
for i in 1 2; do for s in before after; do
  timeout 40 .gpu/host/host_time_micro.$s > "$OUT/host-$s.$i.txt" 2>&1; echo "host $s $i rc=$?"; grep -E "row|FAIL" "$OUT/host-$s.$i.txt"
done; done
mkdir -p "$OUT/suite"
timeout 200 bash scripts/gpu-all.sh "$R/.gpu/packtest" --no-bench --steps "^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness)" > "$OUT/suite/suite.txt" 2>&1
echo "suite rc=$?"; tail -24 "$OUT/suite/suite.txt"
PURLIN_LIBRARY=$R/.gpu/packtest/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout 100 python3 -m pytest -q -o faulthandler_timeout=60 python/tests > "$OUT/pytest.txt" 2>&1
echo "pytest rc=$?"; tail -2 "$OUT/pytest.txt"
PB_LIBS="cpasync tmalib" ATOM_TESTS="" bash "$R/bench/results/2026-12-05-tma/device-run.sh"  # the suite ran the atom tests
