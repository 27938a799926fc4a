#!/usr/bin/env bash
# Device steps of the TMA datapath (issue 34 item 3), one H200, carried as
# .gpu/tma.txz -> .gpu/tma/: atom_copy_test, atom_reduce_test and
# atom_local_micro (nvcc sm_90 of the commit's sources), and two
# libpurlin.so built by build-datapath-library.sh from the same commit:
# cpasync/ (the declarations' `Atom`: Hopper's cp.async pipeline on sm_90)
# and tmalib/ (`HopperTma`). Results under $OUT.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && tar xJf tma.txz && cd "$R"
T=$R/.gpu/tma
for t in ${ATOM_TESTS-atom_copy_test atom_reduce_test}; do
  timeout 150 "$T/$t" > "$OUT/$t.txt" 2>&1
  echo "$t rc=$? pass=$(grep -c PASS "$OUT/$t.txt") fail=$(grep -c FAIL "$OUT/$t.txt")"
done
timeout 100 "$T/atom_local_micro" > "$OUT/atom_local_micro.csv" 2> "$OUT/atom_local_micro.err"
echo "atom_local_micro rc=$?"; cat "$OUT/atom_local_micro.err"
PURLIN_LIBRARY=$T/tmalib/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout 200 \
  python3 -m pytest -q -o faulthandler_timeout=100 python/tests > "$OUT/pytest-tma.txt" 2>&1
echo "pytest (HopperTma library) rc=$?"; tail -2 "$OUT/pytest-tma.txt"
i=0
for l in ${PB_LIBS-cpasync tmalib cpasync tmalib}; do
  i=$((i + 1))
  PURLIN_LIBRARY=$T/$l/libpurlin.so timeout 100 python3 "$R/bench/results/2026-12-05-tma/program_bandwidth.py" \
    $l "$OUT/pb-$l.$i.json" > "$OUT/pb-$l.$i.txt" 2>&1
  echo "program_bandwidth $l rc=$?"
done
grep -h -v Warn "$OUT"/pb-*.txt | sort
