#!/usr/bin/env bash
# Session 14's device run (one GPU; ranks as threads or torchrun processes
# sharing it). Carried (.gpu/): pack.txz (this commit's GPU programs and
# libpurlin.so, scripts/pack-gpu.sh of a slim gpu-bin), base.txz (the
# libpurlin.so of c28a116, whose runtime and generated code are a547a95's:
# the build before this session's kernel change), purlinc.txz (purlinc
# linked statically; the device has no Clang), tma.txz (issue 34's TMA
# table, bench/results/2026-12-05-tma).
#   device-run.sh STEP...
#     atom:   reduce_pair_test (with the fp8 group conversions), atom tests
#     suite:  gpu-all.sh's test steps (STEPS, a grep -E of step names)
#     pairs:  pair_bandwidth.py, every (dtype, op) of AllReduce and
#             ReduceScatter, base and new libraries alternating (ROUNDS),
#             RANKS ranks (default 2), sizes BW_SIZES; bw_table.py new/base
#     lat:    lat_floor_micro --loopback --unchecked --only rt- (LAT_RUNS times):
#             bf16 sum's latency kernels, specialized against the kernel of every pair
#     inplace: coll_bench --in-place at 4 MiB with its plan log (what each in-place row took)
#     bench:  coll_bench --threads 2 --nccl none --in-place, a short sweep
#     pytest: python/tests, with purlinc for purlin.jit and torchrun for
#             the torch.distributed backend
#     tma:    bench/results/2026-12-05-tma/device-run.sh
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" || exit 1
[ -d packtest ] || tar xJf pack.txz
[ -d base ] || tar xJf base.txz
[ -d purlinc ] || tar xJf purlinc.txz
cd "$R"
echo "pack: $(head -1 .gpu/packtest/COMMIT); base: $(head -1 .gpu/base/COMMIT)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=.gpu/packtest
H=bench/results/2026-12-04-instances
for s in "$@"; do
  case $s in
    atom) for t in reduce_pair_test atom_reduce_test atom_copy_test; do
            timeout 200 $P/$t > "$OUT/$t.txt" 2>&1
            echo "$t rc=$? pass=$(grep -c PASS "$OUT/$t.txt") fail=$(grep -c FAIL "$OUT/$t.txt")"
          done; grep -h "fp8\|Accs\|FAIL" "$OUT/reduce_pair_test.txt";;
    suite) timeout ${SUITE_T:-300} bash scripts/gpu-all.sh $P --no-bench --steps "${STEPS:-^(comm|failure|lifetime|vmm|register|oversub|rooted|vform|demo|policy_classes|queue_alias)}" > "$OUT/suite.txt" 2>&1
           echo "suite rc=$?"; tail -22 "$OUT/suite.txt";;
    pairs) mkdir -p "$OUT/bw"
           for i in $(seq ${ROUNDS:-1}); do for l in ${LIBS:-base packtest}; do
             RANKS=${RANKS:-2} ITERS=${ITERS:-5} PURLIN_LIBRARY=$R/.gpu/$l/libpurlin.so timeout ${BWT:-240} \
               python3 "$H/pair_bandwidth.py" $l "$OUT/bw/bw-$l.$i.json" ${BW_SIZES:-268435456 4096} > "$OUT/bw/bw-$l.$i.txt" 2>&1
             echo "$l $i rc=$?"; grep -v Warn "$OUT/bw/bw-$l.$i.txt" | tail -2
           done; done
           python3 bench/results/2026-12-06-s11-device/bw_table.py "$OUT/bw" "${LIBS_CSV:-base,packtest}" base | tee "$OUT/pairs-summary.txt" | awk 'NR == 1 || $NF > 1.03 || $NF < 0.97';;
    pytest) .gpu/purlinc/purlinc --version | head -1
            PURLINC=$R/.gpu/purlinc/purlinc PURLIN_JIT_CACHE=/tmp/jit-cache PURLIN_LIBRARY=$R/$P/libpurlin.so \
              PURLIN_REQUIRE_LIBRARY=1 timeout ${PYT:-420} python3 -m pytest -q -rs -o faulthandler_timeout=300 \
              ${PYTESTS:-python/tests} > "$OUT/pytest.txt" 2>&1
            echo "pytest rc=$?"; grep -E "passed|failed|SKIPPED|FAILED|Error" "$OUT/pytest.txt" | tail -20;;
    bench) mkdir -p "$OUT/bench"
           timeout 150 $P/coll_bench "$OUT/bench" --threads 2 --nccl none -b 1K -e 64M -f 8 --in-place --samples 3 \
             > "$OUT/bench/console.txt" 2>&1
           echo "coll_bench rc=$?"; grep -v "^#" "$OUT/bench/console.txt" | head -40;;
    inplace) mkdir -p "$OUT/inplace"
           timeout 100 $P/coll_bench "$OUT/inplace" --threads 2 --nccl none --colls ag,rs,ar -b 4M -e 4M --in-place --samples 3 \
             > "$OUT/inplace/console.txt" 2>&1
           echo "coll_bench in place rc=$?"; grep -v "^#" "$OUT/inplace/console.txt" | head -20; cat "$OUT/inplace/plans.log";;
    lat) for i in $(seq ${LAT_RUNS:-3}); do
           timeout 120 $P/lat_floor_micro --loopback --unchecked --only rt- > "$OUT/lat-$i.txt" 2>&1; echo "lat_floor_micro $i rc=$?"
         done; paste "$OUT"/lat-*.txt | head -40;;
    tma) PYTEST_ADDOPTS="--ignore=python/tests/test_dist.py" PB_LIBS="${PB_LIBS-cpasync tmalib cpasync tmalib}" \
           bash "$R/bench/results/2026-12-05-tma/device-run.sh";;
  esac
done
