#!/usr/bin/env bash
# Session 20's device run (one GPU, ranks as threads sharing it). Carried
# (.gpu/, ignored):
#   $PACK.txz   - the GPU programs and libpurlin.so of the commit under test
#                 (scripts/pack-gpu.sh of a slim gpu-bin; unpacks to packtest/)
#   b76.txz     - libpurlin.so and lat_floor_micro of 76267df (the build before
#                 this session's kernel changes: the class loop's variant
#                 unswitched, the class dispatch a compare tree)
#   st8v.txz    - session 19's libpurlin.so with only the variant unswitched
#   spec19.txz  - libpurlin.so whose AllReduce and ReduceScatter come from purlinc
#                 with ../2026-12-07-s19-device/spec.json (8 pairs specialized in
#                 every program; build-variant-library.sh); everything else the pack's
#   specall.txz - the same with specall.json: all 50 pairs specialized in the
#                 throughput and direct programs (the comparator of every pair at 256 MiB,
#                 eager and captured; CMP=specall)
#   p20.txz     - lat_floor_micro of 7db35e9 (pack20), the A side of the prefetch A/B (AB_A)
#   device-run.sh STEP...
#     atom:   atom_reduce_test (the any-depth class loop and reducePair) and atom_copy_test
#     pygpu:  python/tests/test_gpu.py (every dtype and op) and test_gpu_fused.py
#     fbench: bench/coll/fused_rmsnorm_bench.py at 2 and 3 ranks
#     fused:  tests/gpu/fused_rmsnorm_test at 1, 2, 3, 5 ranks
#     pairs:  pair_bandwidth.py of every (dtype, op), LIBS alternating (ROUNDS)
#     failure: failure_test (2 and 3 ranks)
#     ab:     scripts/gpu-ab-latency.sh, AB_A (b76/lat_floor_micro) against the pack's (AB_REPS)
#     suite:  gpu-all.sh's test steps (STEPS)
R=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$R"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PACK=${PACK:-pack20}
for t in $PACK b76 st8v spec19 specall p20 ${EXTRA_LIBS:-}; do
  d=$t; [ $t = $PACK ] && d=packtest
  if [ -f .gpu/$t.txz ] && [ ! -d .gpu/$d ]; then tar -C .gpu -xJf .gpu/$t.txz || echo "unpack $t failed"; fi
done
P=.gpu/packtest
export PURLIN_REPO=$R PYTHONPATH=$R/python PURLIN_LIBRARY=$R/$P/libpurlin.so PURLIN_REQUIRE_LIBRARY=1
echo "pack: $(head -1 $P/COMMIT)"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
H=bench/results/2026-12-04-instances
for s in "$@"; do
  case $s in
    pygpu) timeout ${PYG:-300} python3 -m pytest -q -rs -o faulthandler_timeout=150 ${PYTESTS:-python/tests/test_gpu.py python/tests/test_gpu_fused.py} > "$OUT/pyt-gpu.txt" 2>&1
           echo "pytest gpu rc=$?"; grep -E "passed|failed|FAILED|Timeout" "$OUT/pyt-gpu.txt" | tail -12 | cut -c1-300;;
    fused) for k in 1 2 3 5; do
             timeout ${FUSED_T:-100} $P/fused_rmsnorm_test --ranks $k > "$OUT/fused-$k.txt" 2>&1
             echo "fused_rmsnorm_test $k ranks rc=$? pass=$(grep -c ^PASS "$OUT/fused-$k.txt") fail=$(grep -c FAIL "$OUT/fused-$k.txt")"
             grep -E "FAIL" "$OUT/fused-$k.txt" | head -4 | cut -c1-300
           done;;
    fbench) if [ -n "${FB_AB:-}" ]; then  # 2 ranks, 18b15c7's library against this pack's, alternating
              for i in 1 2; do for l in lib17 packtest; do
                PURLIN_LIBRARY=$R/.gpu/$l/libpurlin.so timeout ${FB_T:-150} python3 bench/coll/fused_rmsnorm_bench.py "$OUT/fab-$l.$i.json" --ranks 2 --tokens 1,8,32,128 > "$OUT/fab-$l.$i.txt" 2>&1
                echo "fbench ab $l $i rc=$?"; tail -5 "$OUT/fab-$l.$i.txt"
              done; done
            fi
            timeout ${FB_T:-200} python3 bench/coll/fused_rmsnorm_bench.py "$OUT/fused-bench-2.json" --ranks 2 --tokens 1,8,32,128,256 > "$OUT/fused-bench-2.txt" 2>&1
            echo "fbench 2 rc=$?"; tail -7 "$OUT/fused-bench-2.txt"
            timeout ${FB_T:-200} python3 bench/coll/fused_rmsnorm_bench.py "$OUT/fused-bench-3.json" --ranks 3 --tokens 1,8,32,128,256 > "$OUT/fused-bench-3.txt" 2>&1
            echo "fbench 3 rc=$?"; tail -7 "$OUT/fused-bench-3.txt";;
    atom) for t in atom_reduce_test atom_copy_test; do
            timeout ${ATOM_T:-200} $P/$t > "$OUT/$t.txt" 2>&1; echo "$t rc=$? $(grep -c ^PASS "$OUT/$t.txt") PASS"
            grep -E "FAIL|mismatch" "$OUT/$t.txt" | head -6 | cut -c1-300
          done;;
    lat) for i in $(seq ${LAT_RUNS:-3}); do
           timeout 120 $P/lat_floor_micro --loopback --unchecked --only rt- > "$OUT/lat-$i.txt" 2>&1; echo "lat_floor_micro $i rc=$?"
         done; paste "$OUT"/lat-*.txt | head -40;;
    pairs) mkdir -p "$OUT/bw"
           for i in $(seq ${ROUNDS:-1}); do for l in ${LIBS:-b76 packtest spec19}; do
             RANKS=${RANKS:-2} ITERS=${ITERS:-5} PURLIN_LIBRARY=$R/.gpu/$l/libpurlin.so timeout ${BWT:-240} \
               python3 "$H/pair_bandwidth.py" $l "$OUT/bw/bw-$l.$i.json" ${BW_SIZES:-268435456 4096} > "$OUT/bw/bw-$l.$i.txt" 2>&1
             echo "$l $i rc=$?"; grep -v Warn "$OUT/bw/bw-$l.$i.txt" | tail -2
           done; done
           python3 bench/results/2026-12-06-s11-device/bw_table.py "$OUT/bw" "${LIBS_CSV:-b76,packtest,spec19}" ${CMP:-spec19} | tee "$OUT/pairs-summary.txt" | head -100;;
    ab) timeout ${AB_T:-500} bash scripts/gpu-ab-latency.sh ${AB_A:-.gpu/b76/lat_floor_micro} $P/lat_floor_micro \
          "${AB_REPS:-5}" "$OUT/lat-ab" --loopback --unchecked > "$OUT/lat-ab.txt" 2>&1
        echo "ab rc=$?"; tail -40 "$OUT/lat-ab.txt";;
    failure) timeout ${FAIL_T:-200} $P/failure_test > "$OUT/failure.txt" 2>&1
             echo "failure_test rc=$?"; grep -E "FAIL|destroy|failure_test" "$OUT/failure.txt" | head -20 | cut -c1-300;;
    suite) timeout ${SUITE_T:-300} bash scripts/gpu-all.sh $P --no-bench --steps "${STEPS:-^(oversub|rooted|vform)}" > "$OUT/suite.txt" 2>&1
           echo "suite rc=$?"; tail -22 "$OUT/suite.txt";;
  esac
done
