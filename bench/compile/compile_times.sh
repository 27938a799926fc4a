#!/usr/bin/env bash
# Compile-time budget of issue 33, measured (not a timed test):
#   bench/compile/compile_times.sh PURLINC OUTDIR [BUILD_DIR]
# For purlinc's AllReduce, AllGather and ReduceScatter (dsl_examples, built-in
# sm_90 policy) and the seven-collective file (bench/compile/seven.pl): the
# wall time of `nvcc -c` for sm_90 alone with the library's flags, the
# kernels in the object (cuobjdump), and the object's size. With BUILD_DIR:
# the per-file compile times of its last build (.ninja_log) and the size of
# its libpurlin.so. Writes OUTDIR/compile_times.csv and OUTDIR/summary.txt.
# Run it on an otherwise idle machine (the 2-core CI kind for the budget).
set -euo pipefail
purlinc=$1 out=$2 build=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvcc=${NVCC:-nvcc}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20
       -I"$root/generated" -I"$root/runtime/include")
csv=$out/compile_times.csv
echo "file,nvcc_s,kernels,object_bytes" > "$csv"
one() {  # name pl [purlinc args...]
  local name=$1 pl=$2
  shift 2
  "$purlinc" "$pl" --arch=sm_90 "$@" -o "$work/$name.cu"
  local t0 t1
  t0=$(date +%s.%N)
  "$nvcc" "${flags[@]}" -c "$work/$name.cu" -o "$work/$name.o"
  t1=$(date +%s.%N)
  local kernels
  kernels=$("${CUOBJDUMP:-/usr/local/cuda/bin/cuobjdump}" -res-usage "$work/$name.o" 2>/dev/null | grep -c "^ *Function" || true)
  printf '%s,%.1f,%s,%s\n' "$name" "$(echo "$t1 - $t0" | bc)" "$kernels" "$(stat -c %s "$work/$name.o")" >> "$csv"
  tail -1 "$csv"
}
one allgather "$root/dsl_examples/allgather.pl" --collective=allGather
one reducescatter "$root/dsl_examples/reducescatter.pl" --collective=reduceScatter
one allreduce "$root/dsl_examples/allreduce.pl" --collective=allReduce
one seven "$here/seven.pl"
{
  echo "nvcc -c, sm_90 only, $(nproc) cores, $(date -u +%Y-%m-%d), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')"
  column -s, -t < "$csv"
  python3 - "$csv" <<'PY'
import csv, sys
rows = {r["file"]: float(r["nvcc_s"]) for r in csv.DictReader(open(sys.argv[1]))}
ar, ag = rows["allreduce"], rows["allgather"]
print(f"AllReduce / AllGather: {ar / ag:.2f}x (budget: AllReduce <= 90 s and <= 2x AllGather); "
      f"seven-collective file: {rows['seven']:.0f} s (budget <= 240 s)")
PY
  if [ -n "$build" ]; then
    [ -f "$build/lib/libpurlin.so" ] && echo "libpurlin.so: $(stat -c %s "$build/lib/libpurlin.so") bytes"
    if [ -f "$build/.ninja_log" ]; then
      echo "slowest files of the last build in $build (.ninja_log, seconds):"
      awk 'NR > 1 { t[$4] = ($2 - $1) / 1000 } END { for (f in t) printf "%8.1f %s\n", t[f], f }' "$build/.ninja_log" |
        sort -rn | head -15
    fi
  fi
} | tee "$out/summary.txt"
