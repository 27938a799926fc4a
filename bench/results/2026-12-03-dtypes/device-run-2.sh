#!/usr/bin/env bash
# device steps of issue 19 (kernel loading); logs packed into $OUT/logs.tgz
R=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PURLIN_LIBRARY=$R/.gpu/b/libpurlin.so PYTHONPATH=$R/python PURLIN_REPO=$R
cd "$R/.gpu" && { [ -d b ] || tar xzf b.tgz; }
FINAL_OUT=$OUT; L=/tmp/logs; mkdir -p $L; export OUT=$L
for s in "$@"; do
  case $s in
    plain|stack|warm) echo "== $s"; timeout 60 python3 "$R/.gpu/b2b.py" $s > "$L/b2b-$s.txt" 2>&1; echo "rc=$?"; tail -3 "$L/b2b-$s.txt"; tail -2 "$L"/progress-$s.txt;;
    eager) echo "== eager"; CUDA_MODULE_LOADING=EAGER timeout 90 python3 "$R/.gpu/b2b.py" plain > "$L/b2b-eager.txt" 2>&1; echo "rc=$?"; tail -3 "$L/b2b-eager.txt";;
    create) echo "== create"; python3 "$R/.gpu/create_time.py" > "$L/create-lazy.txt" 2>&1; cat "$L/create-lazy.txt"; CUDA_MODULE_LOADING=EAGER python3 "$R/.gpu/create_time.py" > "$L/create-eager.txt" 2>&1; cat "$L/create-eager.txt";;
    pytest) echo "== pytest"; cd "$R"; timeout ${PYT:-400} python3 -m pytest -v -rs -o faulthandler_timeout=${PYF:-120} python/tests > "$L/pytest.txt" 2>&1; echo "rc=$?"; grep -E "PASS|FAIL|SKIP|ERROR|passed|failed" "$L/pytest.txt" | tail -70;;
    tp) echo "== tp_decode world of one"; cd "$R"; timeout 240 python3 examples/tp_decode.py --iters 10 --reps 5 --out "$L/tp" > "$L/tp_decode.txt" 2>&1; echo "rc=$?"; tail -22 "$L/tp_decode.txt";;
    dynbw) echo "== dynbw"; timeout 300 python3 "$R/.gpu/dyn_bw.py" > "$L/dyn_bw.txt" 2>&1; echo "rc=$?"; cat "$L/dyn_bw.txt" | tail -80;;
    ab) echo "== ab"; timeout 300 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/lat/prev" "$R/.gpu/b/lat_floor_micro" 6 "$L/ab-logs" --loopback --unchecked > "$L/ab.txt" 2>&1; echo "rc=$?"; tail -20 "$L/ab.txt";;
    suite) echo "== suite"; timeout 420 bash "$R/scripts/gpu-all.sh" "$R/.gpu/b" --no-bench --steps '^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|tp_loopback)' > "$L/suite.txt" 2>&1; echo "rc=$?"; tail -25 "$L/suite.txt";;
  esac
done
tar czf "$FINAL_OUT/logs.tgz" -C /tmp logs
