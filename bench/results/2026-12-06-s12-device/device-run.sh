#!/usr/bin/env bash
# Session 12's second device run (one GPU, ranks as threads sharing it).
# Carried (.gpu/): pack.txz (this commit's GPU programs and libpurlin.so,
# without the benchmarks, to fit the carry limit beside purlinc.txz),
# base.txz (tp_loopback_micro of ee3d154) and purlinc.txz (purlinc with the
# Clang/LLVM 14 libraries it links, behind a wrapper that sets
# LD_LIBRARY_PATH: the device machines have no Clang).
#   device-run.sh STEP...
#     reg8:  register_test and oversub_test at 8 ranks (32 queues): the
#            copy-engine form refused past kMaxEngineSharing = 4
#     alias: queue_alias_test, CUDA_DEVICE_MAX_CONNECTIONS=8 and unset (32)
#     jit:   python/tests/test_jit.py and test_gpu_jit.py (purlinc, nvcc here)
#     suite: gpu-all.sh steps comm, failure, rooted, vform, demo, atom, lifetime
#     tp:    tp_loopback_micro, ee3d154 then this commit, alternating, TPREPS each
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" || exit 1
[ -d packtest ] || tar xJf pack.txz
[ -d purlinc ] || { mkdir purlinc && tar xJf purlinc.txz -C purlinc; }
if [ -f base.txz ] && [ ! -d basetest ]; then mkdir -p b && tar xJf base.txz -C b && mv b/packtest basetest && rmdir b; fi
cd "$R"
echo "pack: $(head -1 .gpu/packtest/COMMIT)  base: $(head -1 .gpu/basetest/COMMIT 2>/dev/null)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
P=.gpu/packtest
for s in "$@"; do
  case $s in
    reg8) for t in register_test oversub_test; do
            env -u CUDA_DEVICE_MAX_CONNECTIONS timeout ${REGT:-90} stdbuf -oL $P/$t --ranks 8 > "$OUT/$t-8.txt" 2>&1
            echo "$t 8 ranks rc=$?"; grep -E "^FAIL|failure\(s\)|PASS$" "$OUT/$t-8.txt" | tail -5
          done;;
    alias) for q in 8 unset; do
             if [ $q = unset ]; then env -u CUDA_DEVICE_MAX_CONNECTIONS timeout 60 stdbuf -oL $P/queue_alias_test > "$OUT/alias-$q.txt" 2>&1
             else CUDA_DEVICE_MAX_CONNECTIONS=$q timeout 60 stdbuf -oL $P/queue_alias_test > "$OUT/alias-$q.txt" 2>&1; fi
             echo "alias $q rc=$?"; cat "$OUT/alias-$q.txt" | tail -12
           done;;
    jit) ls /usr/local/cuda/bin/nvcc && .gpu/purlinc/purlinc --version
         PURLINC=$R/.gpu/purlinc/purlinc PURLIN_JIT_CACHE=/tmp/jit-cache PURLIN_LIBRARY=$R/$P/libpurlin.so \
           PURLIN_REQUIRE_LIBRARY=1 timeout ${JITT:-200} python3 -m pytest -q -rs -o faulthandler_timeout=120 \
           python/tests/test_jit.py python/tests/test_gpu_jit.py > "$OUT/jit.txt" 2>&1
         echo "jit rc=$?"; tail -15 "$OUT/jit.txt";;
    suite) timeout ${SUITE_T:-150} bash scripts/gpu-all.sh $P --no-bench --steps "${STEPS:-^(comm|failure|lifetime|rooted|vform|demo|atom)}" > "$OUT/suite.txt" 2>&1
           echo "suite rc=$?"; tail -18 "$OUT/suite.txt";;
    tp) mkdir -p "$OUT/tp"; for i in $(seq ${TPREPS:-5}); do for side in basetest packtest; do
          timeout ${TPT:-40} .gpu/$side/tp_loopback_micro --reps 5 ${TPSIZES:+--sizes $TPSIZES} > "$OUT/tp/$side.$i.log" 2>&1 || echo "$side $i rc=$?"
        done; done
        python3 bench/results/2026-12-06-s11-device/tp_table.py "$OUT/tp" ${TPREPS:-5} | tee "$OUT/tp-summary.txt";;
  esac
done
