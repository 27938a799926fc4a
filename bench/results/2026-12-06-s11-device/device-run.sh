#!/usr/bin/env bash
# Device steps of session 11 (2026-12-06), one GPU, ranks as threads sharing it.
# Packs (.gpu/, carried; scripts/pack-gpu.sh): pack.txz -> packtest/ (this
# session's HEAD); base.txz -> basetest/ (tp_loopback_micro of ee3d154, the
# commit before the ARRIVED tags, for the owed direct-program A/B).
#   device-run.sh STEP...   STEP: alias | reg8 | suite | pytest | tp
#     alias:  queue_alias_test with CUDA_DEVICE_MAX_CONNECTIONS=8 (streams 7
#             apart share a queue) and unset (the runtime sets 32; gap 31)
#     reg8:   register_test and oversub_test at 8 ranks, REG8 times, with
#             the variable 16 (the least 8 ranks in one process may have) and
#             unset (32) (issue 35 item 10); at 8 creation is refused
#     suite:  scripts/gpu-all.sh of the pack (STEPS, no benchmarks)
#     pytest: python/tests against the pack's libpurlin.so
#     tp:     tp_loopback_micro, basetest then packtest alternating, TPREPS runs each
#     pairs:  issue 33's table: every (dtype, op) pair of AllReduce and
#             ReduceScatter, eager and captured (pair_bandwidth.py), for the
#             libraries LIBS (default "packtest variant spec": this commit's,
#             bench/results/2026-12-06-compile/build-variant-library.sh's and
#             bench/results/2026-12-04-rdc/build-spec-library.sh's, unpacked
#             from .gpu/libs.txz into .gpu/variant/ and .gpu/spec/), ROUNDS
#             rounds at BW_SIZES (default 256 MiB and 4 KiB), then bw_table.py
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
P=.gpu/packtest
for s in "$@"; do
  case $s in
    alias) for q in 8 unset; do
             if [ $q = unset ]; then env -u CUDA_DEVICE_MAX_CONNECTIONS timeout 120 $P/queue_alias_test > $L/alias-$q.txt 2>&1
             else CUDA_DEVICE_MAX_CONNECTIONS=$q timeout 120 $P/queue_alias_test > $L/alias-$q.txt 2>&1; fi
             echo "alias $q rc=$?"; grep -vE "^PASS" $L/alias-$q.txt | head -20; cp $L/alias-$q.txt "$OUT/"
           done;;
    reg8) for i in $(seq ${REG8:-2}); do for q in 16 unset; do for t in register_test oversub_test; do
            if [ $q = unset ]; then env -u CUDA_DEVICE_MAX_CONNECTIONS timeout 200 $P/$t --ranks 8 > $L/$t-8-$q.$i.txt 2>&1
            else CUDA_DEVICE_MAX_CONNECTIONS=$q timeout 200 $P/$t --ranks 8 > $L/$t-8-$q.$i.txt 2>&1; fi
            echo "$t 8 ranks queues=$q run $i rc=$?"; grep -E "^FAIL|failure\(s\)" $L/$t-8-$q.$i.txt | head -6
          done; done; done; cp $L/register_test-8-* $L/oversub_test-8-* "$OUT/" 2>/dev/null;;
    suite) echo "== suite"; timeout ${SUITE_T:-400} bash scripts/gpu-all.sh $P --no-bench --steps "${STEPS:-^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|policy_classes|coll_correctness|queue_alias)}" > $L/suite.txt 2>&1; echo "rc=$?"; tail -34 $L/suite.txt; cp $L/suite.txt "$OUT/";;
    pytest) echo "== pytest"; PURLIN_LIBRARY=$R/$P/libpurlin.so PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-250} python3 -m pytest -q -rs -o faulthandler_timeout=${PYF:-90} python/tests > $L/pytest.txt 2>&1; echo "rc=$?"; grep -E "passed|failed|FAIL|ERROR|SKIP" $L/pytest.txt | tail -20; cp $L/pytest.txt "$OUT/";;
    tp) mkdir -p $L/tp; for i in $(seq ${TPREPS:-5}); do for side in basetest packtest; do
          timeout 120 .gpu/$side/tp_loopback_micro > $L/tp/$side.$i.log 2>&1 || echo "$side $i rc=$?"
        done; done
        python3 bench/results/2026-12-06-s11-device/tp_table.py $L/tp ${TPREPS:-5} | tee "$OUT/tp-summary.txt";;
    pairs) [ -d .gpu/variant ] || tar xJf .gpu/libs.txz -C .gpu
           H=bench/results/2026-12-04-instances; mkdir -p $L/bw
           lib() { [ $1 = packtest ] && echo $R/$P/libpurlin.so || echo $R/.gpu/$1/libpurlin.so; }
           for i in $(seq ${ROUNDS:-1}); do for l in ${LIBS:-packtest variant spec}; do
             ITERS=${ITERS:-5} PURLIN_LIBRARY=$(lib $l) timeout ${BWT:-200} python3 "$H/pair_bandwidth.py" $l "$L/bw/bw-$l.$i.json" ${BW_SIZES:-268435456 4096} > "$L/bw/bw-$l.$i.txt" 2>&1
             echo "$l $i rc=$?"; grep -v Warn "$L/bw/bw-$l.$i.txt" | tail -4
           done; done
           python3 bench/results/2026-12-06-s11-device/bw_table.py $L/bw "$(echo ${LIBS:-packtest variant spec} | tr ' ' ,)" spec | tee "$OUT/pairs-summary.txt";;
  esac
done
tar czf "$OUT/logs.tgz" -C /tmp logs
