#!/usr/bin/env bash
# Device steps of session 10 (2026-12-05), one GPU, ranks as threads sharing it.
# Packs (.gpu/, carried; scripts/pack-gpu.sh: build/gpu-bin + libpurlin.so,
# sm_80+sm_90): pack.txz -> packtest/ (the change: packet-group headers,
# issue 35 item 1); base.txz -> basetest/ (ee3d154, the commit before it).
#   device-run.sh STEP...   STEP: new | lat | latv | suite | pytest
#     new:    failure_test, vform_test and register_test of the pack (NEW_TESTS)
#     lat:    latency A/B, basetest then packtest alternating, LATREPS runs
#             each (scripts/gpu-ab-latency.sh --loopback --unchecked)
#     suite:  scripts/gpu-all.sh of the pack (STEPS, no benchmarks)
#     pytest: python/tests against the pack's libpurlin.so
# Logs: $OUT/<step>.txt and $OUT/logs.tgz.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" || exit 1
[ -d packtest ] || tar xJf pack.txz
if [ -f base.txz ] && [ ! -d basetest ]; then mkdir -p b && tar xJf base.txz -C b && mv b/packtest basetest && rmdir b; fi
cd "$R"
echo "pack: $(head -1 .gpu/packtest/COMMIT)  base: $(head -1 .gpu/basetest/COMMIT 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L=/tmp/logs; mkdir -p $L
for s in "$@"; do
  case $s in
    new) for t in ${NEW_TESTS:-failure_test vform_test register_test}; do
           timeout ${NEW_T:-240} .gpu/packtest/$t > $L/$t.txt 2>&1; echo "$t rc=$?"
           grep -E "FAIL|failure\(s\)|PASS unchecked|: (PASS|FAIL)$" $L/$t.txt | tail -14; cp $L/$t.txt "$OUT/"
         done;;
    lat) echo "== latency A/B, basetest (ee3d154) vs packtest"
         timeout ${LATT:-400} bash scripts/gpu-ab-latency.sh .gpu/basetest/lat_floor_micro .gpu/packtest/lat_floor_micro ${LATREPS:-6} $L/lat --loopback --unchecked > $L/lat.txt 2>&1
         echo "rc=$?"; tail -5 $L/lat.txt; cat $L/lat/summary.txt 2>/dev/null | head -60; cp $L/lat/summary.txt "$OUT/lat-summary.txt" 2>/dev/null;;
    latv) # the latency cost split: basetest, packtest and the variants of extra.txz
          # (exp/v0: HEAD built as the variants are (control); exp/v1: no stop check; exp/v2: no header compare; exp/v3: the header compared in group 0 only; exp/v4: v3 without the stop check), LATREPS alternating runs each
          [ -d .gpu/exp ] || tar xJf .gpu/extra.txz -C .gpu
          SIDES="${LATSIDES:-basetest packtest exp/v0 exp/v1 exp/v2 exp/v3 exp/v4}"; mkdir -p $L/latv
          for i in $(seq ${LATREPS:-5}); do for side in $SIDES; do
            timeout 60 .gpu/$side/lat_floor_micro --only rt- --loopback --unchecked > $L/latv/${side//\//_}.$i.log 2>&1 || echo "$side $i failed"
          done; done
          python3 bench/results/2026-12-05-s10-device/lat_table.py $L/latv ${LATREPS:-5} $(echo ${LATSIDES:-basetest packtest exp/v0 exp/v1 exp/v2 exp/v3 exp/v4} | tr / _) | tee "$OUT/latv-summary.txt";;
    suite) echo "== suite"; timeout ${SUITE_T:-400} bash scripts/gpu-all.sh .gpu/packtest --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness)}" > $L/suite.txt 2>&1; echo "rc=$?"; tail -32 $L/suite.txt; cp $L/suite.txt "$OUT/";;
    pytest) echo "== pytest"; PURLIN_LIBRARY=$R/.gpu/packtest/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-250} python3 -m pytest -q -rs -o faulthandler_timeout=${PYF:-90} python/tests > $L/pytest.txt 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR|SKIP" $L/pytest.txt | tail -20; cp $L/pytest.txt "$OUT/";;
  esac
done
tar czf "$OUT/logs.tgz" -C /tmp logs
