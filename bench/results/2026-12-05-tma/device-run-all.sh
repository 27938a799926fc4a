#!/usr/bin/env bash
# The pending device steps (no device was lent in session 7 either): the
# host-time A/B (before/after the occupancy memo, .gpu/host.txz), the GPU
# suite and Python tests of the binaries in .gpu/pack.txz (build/gpu-bin and
# libpurlin.so, sm_80 + sm_90, of the last commit of session 7: printed plan
# rules, bootstrap challenge-response, host exchanges that end on abort),
# then the TMA steps (device-run.sh; .gpu/tma.txz: atom tests and the
# cpasync / HopperTma libraries of session 7's HEAD). Carry
# [".gpu/tma.txz", ".gpu/host.txz", ".gpu/pack.txz"]. Then issue 33's table:
# bench/results/2026-12-04-rdc/device-run.sh bw with LIBS="new spec"
# (carry .gpu/pack.txz and .gpu/spec.txz, the spec library of that HEAD).
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
