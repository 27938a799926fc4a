#!/usr/bin/env bash
# Device steps of issue 33, session 4 (throughput units as relocatable device
# code, then the push CTA shapes). One H200, ranks as threads sharing it.
# Binaries (.gpu/, carried; built here for sm_80 and sm_90 or sm_90 alone):
#   pack.txz -> packtest/: build/gpu-bin of the commit and its libpurlin.so
#               (left for the next session: d83309e, session 6)
#   old.txz  -> oldbin/: 751f597's libpurlin.so, tp_loopback_micro and
#               lat_floor_micro (device runs 1-4 used old/libpurlin.so)
#   spec.txz -> spec/libpurlin.so: build-spec-library.sh of the commit
#               (AllReduce and ReduceScatter with 8 pairs specialized)
#   runs 1-4 also carried new/cls/lp (README: the experiments)
# Logs packed into $OUT/logs.tgz.   device-run.sh STEP...
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && for p in pack old spec cls lp; do [ -f $p.txz ] && tar xJf $p.txz; done
H=$R/bench/results/2026-12-04-instances
FINAL_OUT=$OUT; L=/tmp/logs; mkdir -p $L; export OUT=$L
lib() { case $1 in new) echo $R/.gpu/packtest/libpurlin.so;; old) [ -d $R/.gpu/oldbin ] && echo $R/.gpu/oldbin/libpurlin.so || echo $R/.gpu/old/libpurlin.so;; *) echo $R/.gpu/$1/libpurlin.so;; esac; }
for s in "$@"; do
  case $s in
    suite) echo "== suite"; timeout ${SUITE_T:-540} bash "$R/scripts/gpu-all.sh" "$R/.gpu/packtest" --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness|tp_loopback)}" > "$L/suite.txt" 2>&1; echo "rc=$?"; tail -30 "$L/suite.txt";;
    pytest) echo "== pytest"; cd "$R"; PURLIN_LIBRARY=$(lib new) PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-400} python3 -m pytest -v -rs -o faulthandler_timeout=${PYF:-120} python/tests > "$L/pytest.txt" 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR" "$L/pytest.txt" | tail -30;;
    tp) echo "== tp_loopback_micro A/B, 751f597 vs the commit"; for i in 1 2 3 4 5; do for side in oldbin packtest; do timeout 120 "$R/.gpu/$side/tp_loopback_micro" > "$L/tpx-$side.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; python3 "$H/tp_table.py" "$L" oldbin packtest | tail -30;;
    lat) echo "== latency A/B, 751f597 vs the commit"; timeout ${LATT:-400} bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/oldbin/lat_floor_micro" "$R/.gpu/packtest/lat_floor_micro" ${LATREPS:-6} "$L/lat" --loopback --unchecked > "$L/lat.txt" 2>&1; echo "rc=$?"; cat "$L/lat/summary.txt" 2>/dev/null | head -40;;
    bw) echo "== pair bandwidth (PAIRS): ${LIBS:-old new spec}, ${ROUNDS:-1} rounds"; for i in $(seq ${ROUNDS:-1}); do for l in ${LIBS:-old new spec}; do ITERS=${ITERS:-5} PURLIN_LIBRARY=$(lib $l) timeout ${BWT:-140} python3 "$H/pair_bandwidth.py" $l "$L/bw-$l.$i.json" ${BW_SIZES:-268435456} > "$L/bw-$l.$i.txt" 2>&1; echo "$l $i rc=$?"; grep -v Warn "$L/bw-$l.$i.txt" | tail -20; done; done;;
  esac
done
tar czf "$FINAL_OUT/logs.tgz" -C /tmp logs
