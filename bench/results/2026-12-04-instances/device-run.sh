#!/usr/bin/env bash
# Device steps of issue 33 (one H200; ranks as threads sharing it). Binaries
# under .gpu/: new = this change (build-gpu, sm_90), old = the build before
# (9f55bfe, sm_90). Logs packed into $OUT/logs.tgz.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && for d in new old exp fix; do [ -d $d ] || [ ! -f $d.tgz ] || tar xzf $d.tgz; done
H=$R/bench/results/2026-12-04-instances
FINAL_OUT=$OUT; L=/tmp/logs; mkdir -p $L; export OUT=$L
for s in "$@"; do
  case $s in
    pairtest) echo "== reduce_pair_test"; timeout 200 "$R/.gpu/new/reduce_pair_test" > "$L/reduce_pair.txt" 2>&1; echo "rc=$?"; cat "$L/reduce_pair.txt";;
    pytest) echo "== pytest"; cd "$R"; PURLIN_LIBRARY=$R/.gpu/new/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-400} python3 -m pytest -v -rs -o faulthandler_timeout=${PYF:-120} python/tests > "$L/pytest.txt" 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR" "$L/pytest.txt" | tail -30;;
    bw) echo "== pair bandwidth"; for lib in new old; do PURLIN_LIBRARY=$R/.gpu/$lib/libpurlin.so timeout 280 python3 "$H/pair_bandwidth.py" $lib "$L/bw-$lib.json" ${BW_SIZES:-268435456} > "$L/bw-$lib.txt" 2>&1; echo "$lib rc=$?"; tail -3 "$L/bw-$lib.txt"; done;;
    bwsmall) echo "== pair bandwidth 64 KiB"; for lib in new old; do ITERS=50 PURLIN_LIBRARY=$R/.gpu/$lib/libpurlin.so timeout 200 python3 "$H/pair_bandwidth.py" $lib "$L/bws-$lib.json" 65536 > "$L/bws-$lib.txt" 2>&1; echo "$lib rc=$?"; tail -2 "$L/bws-$lib.txt"; done;;
    ab) echo "== latency ab"; timeout 300 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/old/lat_floor_micro" "$R/.gpu/new/lat_floor_micro" 6 "$L/ab-logs" --loopback --unchecked > "$L/ab.txt" 2>&1; echo "rc=$?"; tail -20 "$L/ab.txt";;
    tp) echo "== tp_loopback ab"; for i in 1 2 3; do for side in old new; do timeout 120 "$R/.gpu/$side/tp_loopback_micro" > "$L/tp-$side.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; tail -30 "$L/tp-new.1.txt";;
    regs) echo "== registers"; CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump); "$CUOBJ" -res-usage "$R/.gpu/new/libpurlin.so" > "$L/regs.txt" 2>&1; echo "rc=$?"; grep -A1 -E "Function .*(throughputKernel|latencyKernel|directKernel)" "$L/regs.txt" | grep -oE "Function [^ :]+|REG:[0-9]+|STACK:[0-9]+" | paste - - - | sed 's/Function //' | awk '{print $2, $3, $1}' | sort | uniq -c | sort -rn | head -40;;
    tpexp) echo "== tp_loopback variants"; for i in 1 2 3; do for side in old/tp_loopback_micro new/tp_loopback_micro exp/tp_INLINE_RANGE exp/tp_STATIC_STAGES; do timeout 120 "$R/.gpu/$side" > "$L/tpx-${side//\//-}.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done;;
    tpfix) echo "== tp_loopback: before, step 1, the fix"; for i in 1 2 3 4 5; do for side in old/tp_loopback_micro new/tp_loopback_micro fix/tp_loopback_micro; do timeout 120 "$R/.gpu/$side" > "$L/tpx-${side//\//-}.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; python3 "$H/tp_table.py" "$L" old-tp_loopback_micro new-tp_loopback_micro fix-tp_loopback_micro | grep -v "AllGather\|AllToAll";;
    abfix) echo "== latency ab, the fix"; timeout 300 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/old/lat_floor_micro" "$R/.gpu/fix/lat_floor_micro" 6 "$L/abfix-logs" --loopback --unchecked > "$L/abfix.txt" 2>&1; echo "rc=$?"; tail -20 "$L/abfix.txt";;
    tptable) echo "== tp_loopback: before, the fix, one call site (exp)"; for i in 1 2 3 4 5; do for side in old/tp_loopback_micro fix/tp_loopback_micro exp/tp_loopback_micro; do timeout 120 "$R/.gpu/$side" > "$L/tpx-${side//\//-}.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; python3 "$H/tp_table.py" "$L" old-tp_loopback_micro fix-tp_loopback_micro exp-tp_loopback_micro | grep -v "AllGather\|AllToAll";;
    abexp) echo "== latency ab, exp"; timeout 300 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/old/lat_floor_micro" "$R/.gpu/exp/lat_floor_micro" 6 "$L/abexp-logs" --loopback --unchecked > "$L/abexp.txt" 2>&1; echo "rc=$?"; tail -20 "$L/abexp.txt";;
    tpdisp) echo "== tp_loopback: before, the fix, one dispatch call (exp)"; for i in 1 2 3 4 5; do for side in old/tp_loopback_micro fix/tp_loopback_micro exp/tp_dispatch exp/tp_dispatch_inline; do timeout 120 "$R/.gpu/$side" > "$L/tpx-${side//\//-}.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; python3 "$H/tp_table.py" "$L" old-tp_loopback_micro fix-tp_loopback_micro exp-tp_dispatch exp-tp_dispatch_inline | grep -v "AllGather\|AllToAll";;
    abconst) echo "== latency ab, one class, op constant (exp)"; timeout 300 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/old/lat_floor_micro" "$R/.gpu/exp/lat_const" 6 "$L/abconst-logs" --loopback --unchecked > "$L/abconst.txt" 2>&1; echo "rc=$?"; tail -20 "$L/abconst.txt";;
    tpfinal) echo "== tp_loopback: before, final"; for i in 1 2 3 4 5; do for side in old/tp_loopback_micro new/tp_loopback_micro; do timeout 120 "$R/.gpu/$side" > "$L/tpx-${side//\//-}.$i.txt" 2>&1; echo "$side $i rc=$?"; done; done; python3 "$H/tp_table.py" "$L" old-tp_loopback_micro new-tp_loopback_micro | grep -v "AllGather\|AllToAll";;
    bwpairs) echo "== pair bandwidth (PAIRS)"; for lib in new old; do ITERS=${ITERS:-5} PURLIN_LIBRARY=$R/.gpu/$lib/libpurlin.so timeout ${BWT:-150} python3 "$H/pair_bandwidth.py" $lib "$L/bw-$lib.json" ${BW_SIZES:-268435456} > "$L/bw-$lib.txt" 2>&1; echo "$lib rc=$?"; grep -v Warn "$L/bw-$lib.txt" | tail -30; done;;
    suite) echo "== suite"; timeout 500 bash "$R/scripts/gpu-all.sh" "$R/.gpu/new" --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|tp_loopback)}" > "$L/suite.txt" 2>&1; echo "rc=$?"; tail -25 "$L/suite.txt";;
  esac
done
tar czf "$FINAL_OUT/logs.tgz" -C /tmp logs
