#!/usr/bin/env bash
# The comparator of issue 33's bar, "a build specialized for that pair": a
# libpurlin.so whose AllReduce and ReduceScatter come from purlinc with
# spec.json (the built-in policy with reductions.specialize = the 8 pairs
# that pair_bandwidth.py measures), sm_90; everything else is BUILD's.
#   build-spec-library.sh BUILD OUTDIR [POLICY]   (BUILD: a configured, built tree;
#   POLICY: another policy file instead of spec.json)
# (Device runs 1-4 used the libraries of this session's experiments, linked
# the same way by hand from /tmp; `spec` there predates e42b392, so its
# specialized kernels had all four push CTA shapes.)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd)
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
for ex in allreduce:allReduce reducescatter:reduceScatter; do
  "$B/bin/purlinc" "$root/dsl_examples/${ex%%:*}.pl" --emit=cuda --arch=sm_90 --collective=${ex##*:} \
    --policy "${3:-$here/spec.json}" -o "$w/${ex%%:*}.cu"
done
F=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20 -I"$w" -I"$root/runtime/include")
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
