#!/usr/bin/env bash
# Device steps of session 9 (2026-12-05), one H200, ranks as threads sharing it.
# Packs (.gpu/, carried): pack.txz -> packtest/ (scripts/pack-gpu.sh of the
# commit: build/gpu-bin + libpurlin.so, sm_80+sm_90); old.txz -> oldbin/
# (267eb83, the last commit measured on a GPU (session 6), built sm_90 with
# HEAD's bench/micro/host_time_micro.cu added: lat_floor_micro,
# tp_loopback_micro, host_time_micro, libpurlin.so).
#   device-run.sh STEP...   STEP: suite | pytest | lat | tp | host | sanitize
# Logs: $OUT/<step>.txt and $OUT/logs.tgz.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && for p in pack old; do [ -f $p.txz ] && [ ! -d ${p/pack/packtest} ] && tar xJf $p.txz; done; cd "$R"
[ -f .gpu/old.txz ] && [ ! -d .gpu/oldbin ] && tar xJf .gpu/old.txz -C .gpu
cat .gpu/packtest/COMMIT 2>/dev/null | head -3
L=/tmp/logs; mkdir -p $L
H=$R/bench/results/2026-12-04-instances
for s in "$@"; do
  case $s in
    suite) echo "== suite"; timeout ${SUITE_T:-300} bash scripts/gpu-all.sh .gpu/packtest --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness)}" > $L/suite.txt 2>&1; echo "rc=$?"; tail -32 $L/suite.txt; cp $L/suite.txt "$OUT/";;
    pytest) echo "== pytest"; PURLIN_LIBRARY=$R/.gpu/packtest/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-250} python3 -m pytest -q -rs -o faulthandler_timeout=${PYF:-90} python/tests > $L/pytest.txt 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR|SKIP" $L/pytest.txt | tail -20; cp $L/pytest.txt "$OUT/";;
    lat) echo "== latency A/B, oldbin (267eb83) vs packtest"; timeout ${LATT:-300} bash scripts/gpu-ab-latency.sh .gpu/oldbin/lat_floor_micro .gpu/packtest/lat_floor_micro ${LATREPS:-6} $L/lat --loopback --unchecked > $L/lat.txt 2>&1; echo "rc=$?"; cat $L/lat/summary.txt 2>/dev/null | head -40; cp $L/lat/summary.txt "$OUT/lat-summary.txt" 2>/dev/null;;
    tp) echo "== tp_loopback_micro A/B"; for i in $(seq ${TPREPS:-5}); do for side in oldbin packtest; do timeout 120 .gpu/$side/tp_loopback_micro > $L/tpx-$side.$i.txt 2>&1; echo "$side $i rc=$?"; done; done; python3 $H/tp_table.py $L oldbin packtest | tee "$OUT/tp-ab.txt" | tail -40;;
    host) echo "== host_time_micro A/B"; for i in $(seq ${HOSTREPS:-3}); do for side in oldbin packtest; do timeout 60 .gpu/$side/host_time_micro > $L/host-$side.$i.txt 2>&1; echo "$side $i rc=$?"; grep -E "row|FAIL" $L/host-$side.$i.txt; done; done;;
    sanitize) echo "== sanitize"; timeout ${SAN_T:-500} bash scripts/gpu-all.sh .gpu/packtest --no-bench --steps "${SSTEPS:-^sanitize}" > $L/sanitize.txt 2>&1; echo "rc=$?"; tail -16 $L/sanitize.txt; cp $L/sanitize.txt "$OUT/";;
  esac
done
tar czf "$OUT/logs.tgz" -C /tmp logs
