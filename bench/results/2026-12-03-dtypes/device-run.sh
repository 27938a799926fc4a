#!/usr/bin/env bash
# device calls of the element-arithmetic change: python GPU tests, latency A/B (old = ff8cd86), GPU suite
R=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$R/.gpu" && rm -rf b && tar xzf b.tgz
mkdir -p "$OUT/logs"
run() { local name=$1 budget=$2; shift 2; echo "== $name"; OUT="$OUT/logs/$name" timeout "$budget" "$@" > "$OUT/logs/$name.txt" 2>&1; echo "rc=$?" >> "$OUT/logs/$name.txt"; tail -${TAILN:-14} "$OUT/logs/$name.txt"; }
for s in "$@"; do
  case $s in
    python) run python 400 bash "$R/scripts/gpu-all.sh" "$R/.gpu/b" --no-bench --steps '^python';;
    ab) run ab 200 bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/lat/old" "$R/.gpu/b/lat_floor_micro" 6 "$OUT/logs/ab-logs" --loopback --unchecked;;
    suite) run suite 420 bash "$R/scripts/gpu-all.sh" "$R/.gpu/b" --no-bench --steps '^(comm|failure|lifetime|register|oversub|rooted|vform|demo|atom|reduce_pair|tp_loopback)';;
  esac
done
