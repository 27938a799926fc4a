#!/usr/bin/env bash
# A libpurlin.so whose AllReduce and ReduceScatter are compiled against a
# patched copy of runtime/include (class-code.patch, every experiment macro
# on), for the GPU A/B of issue 33's class-code levers against BUILD's own
# library (same commit) and the specialized comparator
# (bench/results/2026-12-04-rdc/build-spec-library.sh).
#   build-variant-library.sh BUILD OUTDIR [PATCH] [MACROS] [POLICY]
# BUILD: a configured, built tree of this commit; PATCH: class-code.patch;
# MACROS: "-DPURLIN_EXPERIMENT_STAGE_ALL -DPURLIN_EXPERIMENT_PAIR_UNROLL=1
# -DPURLIN_EXPERIMENT_GROUP_ROTATE"; POLICY: purlinc's built-in sm_90 one
# (or a file, e.g. one that specializes no pair). sm_90 only, as the
# comparator. Everything but AllReduce and ReduceScatter is BUILD's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd)
patch=${3:-$here/class-code.patch}
macros=${4:--DPURLIN_EXPERIMENT_STAGE_ALL -DPURLIN_EXPERIMENT_PAIR_UNROLL=1 -DPURLIN_EXPERIMENT_GROUP_ROTATE}
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
mkdir -p "$w/tree/runtime" && cp -a "$root/runtime/include" "$w/tree/runtime/"
(cd "$w/tree" && patch -s -p1 < "$patch")
pol=(); [ -n "${5:-}" ] && pol=(--policy "$5")
for ex in allreduce:allReduce reducescatter:reduceScatter; do
  "$B/bin/purlinc" "$root/dsl_examples/${ex%%:*}.pl" --emit=cuda --arch=sm_90 --collective=${ex##*:} "${pol[@]}" \
    -o "$w/${ex%%:*}.cu"
done
read -ra M <<< "$macros"
F=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20 "${M[@]}"
   -I"$w" -I"$w/tree/runtime/include")
export NVCC=/usr/local/cuda/bin/nvcc
for stem in allreduce reducescatter; do for u in "" .latency .direct .pairs .throughput; do echo "$w/$stem$u.cu"; done; done |
  xargs -P "$(nproc)" -I{} "$NVCC" "${F[@]}" -c {} -o {}.o
cp "$B/lib/libpurlin_generated.a" "$w/gen.a"
(cd "$w" && ar r gen.a allreduce*.cu.o reducescatter*.cu.o)
objs=$(sed -n 's/^build lib\/libpurlin.so: CXX_SHARED_LIBRARY_LINKER__purlin_shared_[A-Za-z]* \([^|]*\)|.*/\1/p' "$B/build.ninja")
(cd "$B" && g++ -fPIC -O3 -DNDEBUG -Wl,--exclude-libs,libcudart_static.a -Wl,--no-undefined -shared \
  -Wl,-soname,libpurlin.so -o "$out/libpurlin.so" $objs -Wl,--whole-archive "$w/gen.a" -Wl,--no-whole-archive \
  /usr/local/cuda/lib/libcudart_static.a -ldl /usr/lib/x86_64-linux-gnu/librt.a -lpthread)
ls -la "$out/libpurlin.so"
