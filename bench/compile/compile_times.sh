#!/usr/bin/env bash
# Compile-time budget of issue 33, measured (not a timed test):
#   bench/compile/compile_times.sh PURLINC OUTDIR [BUILD_DIR]
# For purlinc's AllReduce, AllGather and ReduceScatter (dsl_examples, built-in
# sm_90 policy) and the seven-collective file (bench/compile/seven.pl): each
# of purlinc's .cu files (the host API and the kernel units, docs/codegen.md
# "Files") compiled by `nvcc -c` for sm_90 alone with the library's flags.
# Per file: its own wall time, the kernels in its object (cuobjdump) and the
# object's size; per purlinc output: the sum of the files' times (one core)
# and the wall time of compiling them JOBS at a time (default: the cores, as
# ninja does under purlin_add_collective). With BUILD_DIR: the per-file
# compile times of its last build (.ninja_log) and the size of its
# libpurlin.so. Writes OUTDIR/compile_times.csv (per output),
# OUTDIR/units.csv (per file) and OUTDIR/summary.txt.
# Run it on an otherwise idle machine (the 2-core CI kind for the budget).
set -euo pipefail
purlinc=$1 out=$2 build=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
nvcc=${NVCC:-nvcc}
jobs=${JOBS:-$(nproc)}
cuobjdump=${CUOBJDUMP:-/usr/local/cuda/bin/cuobjdump}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20
       -I"$work" -I"$root/runtime/include")
csv=$out/compile_times.csv units=$out/units.csv
echo "output,files,sum_s,wall_s,jobs,kernels,object_bytes" > "$csv"
echo "output,file,nvcc_s,kernels,object_bytes" > "$units"

# One file (run JOBS at a time by xargs): nvcc -c, its time, kernels and
# size appended to $units.
cat > "$work/unit.sh" <<'SH'
#!/usr/bin/env bash
set -euo pipefail
name=$1 cu=$2 obj=${2%.cu}.o
read -ra flags <<< "$FLAGS"
t0=$(date +%s.%N)
"$NVCC" "${flags[@]}" -c "$cu" -o "$obj"
t1=$(date +%s.%N)
kernels=$("$CUOBJDUMP" -res-usage "$obj" 2>/dev/null | grep -c "^ *Function" || true)
printf '%s,%s,%.1f,%s,%s\n' "$name" "$(basename "$cu")" "$(echo "$t1 - $t0" | bc)" "$kernels" \
  "$(stat -c %s "$obj")" >> "$UNITS"
SH
chmod +x "$work/unit.sh"
export NVCC=$nvcc CUOBJDUMP=$cuobjdump UNITS=$units FLAGS="${flags[*]}"

one() {  # name pl [purlinc args...]
  local name=$1 pl=$2
  shift 2
  "$purlinc" "$pl" --arch=sm_90 "$@" -o "$work/$name.cu"
  local files=("$work/$name.cu" "$work/$name.latency.cu" "$work/$name.throughput.cu" "$work/$name.direct.cu"
               "$work/$name.pairs.cu")
  local t0 t1
  t0=$(date +%s.%N)
  # JOBS at a time, as ninja compiles a purlin_add_collective library.
  printf '%s\n' "${files[@]}" | xargs -P "$jobs" -n 1 "$work/unit.sh" "$name"
  t1=$(date +%s.%N)
  python3 - "$units" "$name" "$(echo "$t1 - $t0" | bc)" "$jobs" >> "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["output"] == sys.argv[2]]
print(f'{sys.argv[2]},{len(rows)},{sum(float(r["nvcc_s"]) for r in rows):.1f},{float(sys.argv[3]):.1f},{sys.argv[4]},'
      f'{sum(int(r["kernels"]) for r in rows)},{sum(int(r["object_bytes"]) for r in rows)}')
PY
  tail -1 "$csv"
}
one allgather "$root/dsl_examples/allgather.pl" --collective=allGather
one reducescatter "$root/dsl_examples/reducescatter.pl" --collective=reduceScatter
one allreduce "$root/dsl_examples/allreduce.pl" --collective=allReduce
one seven "$here/seven.pl"
{
  echo "nvcc -c, sm_90 only, $(nproc) cores, $jobs jobs, $(date -u +%Y-%m-%d), commit $(git -C "$root" rev-parse --short HEAD)$(git -C "$root" diff --quiet || echo '+dirty')"
  column -s, -t < "$csv"
  echo
  echo "per file:"
  column -s, -t < "$units"
  python3 - "$csv" <<'PY'
import csv, sys
rows = {r["output"]: r for r in csv.DictReader(open(sys.argv[1]))}
ar, ag = float(rows["allreduce"]["wall_s"]), float(rows["allgather"]["wall_s"])
print(f"AllReduce {ar:.0f} s / AllGather {ag:.0f} s (wall, {rows['allreduce']['jobs']} jobs): {ar / ag:.2f}x "
      f"(budget: AllReduce <= 90 s and <= 2x AllGather); seven-collective file: {float(rows['seven']['wall_s']):.0f} s "
      f"(budget <= 240 s); one core: AllReduce {float(rows['allreduce']['sum_s']):.0f} s, "
      f"seven {float(rows['seven']['sum_s']):.0f} s")
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
