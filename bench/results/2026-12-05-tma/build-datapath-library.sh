#!/usr/bin/env bash
# A libpurlin.so whose eleven collectives come from the dsl_examples with
# another datapath in the declarations' Atom position (issue 34 item 3: a
# datapath is chosen in the declaration; nothing else changes): every
# `SNAC<Atom, ...>` becomes `SNAC<DATAPATH, ...>`, purlinc emits each
# collective as generated/CMakeLists.txt does (built-in policies, sm_90),
# nvcc compiles the units for sm_90, and the library is linked from BUILD's
# runtime objects as build-spec-library.sh does.
#   build-datapath-library.sh BUILD OUTDIR DATAPATH     (e.g. HopperTma)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd); root=$(cd "$here/../../.." && pwd)
B=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd); dp=$3
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
mkdir -p "$w/pl"
for f in "$root"/dsl_examples/*.pl; do sed "s/SNAC<Atom,/SNAC<$dp,/g" "$f" > "$w/pl/$(basename "$f")"; done
examples="allgather:allGather reducescatter:reduceScatter allreduce:allReduce alltoall:allToAll broadcast:broadcast
  reduce:reduce scatter:scatter gather:gather allgatherv:allGatherV reducescatterv:reduceScatterV alltoallv:allToAllV"
for ex in $examples; do
  "$B/bin/purlinc" "$w/pl/${ex%%:*}.pl" --emit=cuda --arch=sm_90 --collective=${ex##*:} -o "$w/${ex%%:*}.cu"
done
tag=$dp; [ "$dp" = Atom ] && tag=Native  # the .pl spelling of the native datapath
grep -q "atom::$tag;" "$w/allreduce.programs.h" || { echo "purlinc did not take datapath $dp" >&2; exit 1; }
F=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20 -I"$w" -I"$root/runtime/include")
export NVCC=/usr/local/cuda/bin/nvcc
for ex in $examples; do for u in "" .latency .direct .pairs .throughput; do echo "$w/${ex%%:*}$u.cu"; done; done |
  xargs -P "$(nproc)" -I{} "$NVCC" "${F[@]}" -c {} -o {}.o
(cd "$w" && ar rc gen.a ./*.cu.o)
objs=$(sed -n 's/^build lib\/libpurlin.so: CXX_SHARED_LIBRARY_LINKER__purlin_shared_[A-Za-z]* \([^|]*\)|.*/\1/p' "$B/build.ninja")
(cd "$B" && g++ -fPIC -O3 -DNDEBUG -Wl,--exclude-libs,libcudart_static.a -Wl,--no-undefined -shared \
  -Wl,-soname,libpurlin.so -o "$out/libpurlin.so" $objs -Wl,--whole-archive "$w/gen.a" -Wl,--no-whole-archive \
  /usr/local/cuda/lib/libcudart_static.a -ldl /usr/lib/x86_64-linux-gnu/librt.a -lpthread)
ls -la "$out/libpurlin.so"
