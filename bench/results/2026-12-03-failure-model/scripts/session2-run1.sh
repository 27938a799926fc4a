#!/usr/bin/env bash
# device call 1: python GPU tests, the GPU suite, the latency A/B (v0 vs this build, unchecked)
R=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$R/.gpu" && tar xzf b.tgz
python3 -c "import torch, sys; print('torch', torch.__version__, sys.version.split()[0])"
python3 -c "import pytest; print('pytest', pytest.__version__)" 2>&1 | tail -1
mkdir -p "$OUT/logs"
run() { local name=$1 budget=$2; shift 2; echo "== $name"; OUT="$OUT/logs/$name" timeout "$budget" "$@" > "$OUT/logs/$name.txt" 2>&1; echo "rc=$?" >> "$OUT/logs/$name.txt"; tail -25 "$OUT/logs/$name.txt"; }
run python 240 bash "$R/scripts/gpu-all.sh" "$R/.gpu/b" --no-bench --steps '^python'
run suite 200 bash "$R/scripts/gpu-all.sh" "$R/.gpu/b" --no-bench --steps '^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair)'
mkdir -p "$OUT/logs/lat"
for i in 1 2 3 4 5 6; do
  for v in v0 new; do
    b="$R/.gpu/lat/v0"; a=(--only rt- --loopback); [ $v = new ] && { b="$R/.gpu/b/lat_floor_micro"; a+=(--unchecked); }
    [ $v = v0 ] && export LAT_FLOOR_UNCHECKED=1
    timeout 60 "$b" "${a[@]}" > "$OUT/logs/lat/$v.$i.log" 2>&1 || echo "$v run $i failed"
    unset LAT_FLOOR_UNCHECKED
  done
done
cd "$OUT" && tar czf logs.tgz logs && rm -rf logs && ls
