#!/usr/bin/env bash
# Device steps of issue 33 step 3 (purlinc's kernel units; tests link the
# generated library). One H200, ranks as threads sharing it. Binaries:
# .gpu/pack.txz = build/gpu-bin of this change plus its libpurlin.so
# (stripped, xz), .gpu/old.txz = the libpurlin.so before it (bd87015's
# kernels, the same as 1ea6247's). Logs packed into $OUT/logs.tgz.
#   device-run.sh STEP...   (suite, pytest, bw, bwfill)
# Run 3 (avg's last step without a division for 2, 4, 8 ranks) used a
# pack of this commit's working tree with that change: the steps are the same.
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && { [ -d packtest ] || tar xJf pack.txz; [ -d old ] || tar xJf old.txz; }
NEW=$R/.gpu/packtest OLD=$R/.gpu/old
H=$R/bench/results/2026-12-04-instances
FINAL_OUT=$OUT; L=/tmp/logs; mkdir -p $L; export OUT=$L
for s in "$@"; do
  case $s in
    suite) echo "== suite"; timeout ${SUITE_T:-540} bash "$R/scripts/gpu-all.sh" "$NEW" --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness|tp_loopback)}" > "$L/suite.txt" 2>&1; echo "rc=$?"; tail -30 "$L/suite.txt";;
    pytest) echo "== pytest"; cd "$R"; PURLIN_LIBRARY=$NEW/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-400} python3 -m pytest -v -rs -o faulthandler_timeout=${PYF:-120} python/tests > "$L/pytest.txt" 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR" "$L/pytest.txt" | tail -30;;
    bwfill) echo "== avg, zeros and ones, old vs new"; for fill in zeros ones; do for lib in old new; do d=$OLD; [ $lib = new ] && d=$NEW; FILL=$fill ITERS=${ITERS:-5} PURLIN_LIBRARY=$d/libpurlin.so timeout ${BWT:-140} python3 "$H/pair_bandwidth.py" $lib "$L/bwf-$lib-$fill.json" ${BW_SIZES:-268435456} > "$L/bwf-$lib-$fill.txt" 2>&1; echo "$lib $fill rc=$?"; grep -v Warn "$L/bwf-$lib-$fill.txt" | tail -14; done; done;;
    bwab) echo "== old/new alternating (PAIRS)"; for i in 1 2 3 4; do for lib in old new; do d=$OLD; [ $lib = new ] && d=$NEW; ITERS=${ITERS:-5} PURLIN_LIBRARY=$d/libpurlin.so timeout ${BWT:-100} python3 "$H/pair_bandwidth.py" $lib "$L/bwab-$lib.$i.json" ${BW_SIZES:-268435456} > "$L/bwab-$lib.$i.txt" 2>&1; echo "$lib $i rc=$?"; grep -v Warn "$L/bwab-$lib.$i.txt" | tail -6; done; done;;
    bw) echo "== pair bandwidth (PAIRS) old vs new"; for i in 1 2; do for lib in old new; do d=$OLD; [ $lib = new ] && d=$NEW; ITERS=${ITERS:-5} PURLIN_LIBRARY=$d/libpurlin.so timeout ${BWT:-140} python3 "$H/pair_bandwidth.py" $lib "$L/bw-$lib.$i.json" ${BW_SIZES:-268435456} > "$L/bw-$lib.$i.txt" 2>&1; echo "$lib $i rc=$?"; grep -v Warn "$L/bw-$lib.$i.txt" | tail -14; done; done;;
  esac
done
tar czf "$FINAL_OUT/logs.tgz" -C /tmp logs
