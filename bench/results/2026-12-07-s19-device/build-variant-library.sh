#!/usr/bin/env bash
# A libpurlin.so whose AllReduce and ReduceScatter units come from another
# source (issue 33's A/B and its comparator); everything else is BUILD's.
#   build-variant-library.sh BUILD OUTDIR TREE [POLICY]
#   TREE:   a tree with runtime/include, generated/ and dsl_examples/ (e.g. `git archive REV
#           runtime generated dsl_examples | tar -x -C TREE`): its headers compile the units.
#   POLICY: purlinc (BUILD's) prints the two collectives from TREE's .pl with this policy
#           (spec.json: the comparator, "a build specialized for that pair"); without it,
#           TREE's generated/ units as committed (the build of that commit).
set -euo pipefail
B=$(cd "$1" && pwd); mkdir -p "$2"; out=$(cd "$2" && pwd); T=$(cd "$3" && pwd)
w=$(mktemp -d); trap 'rm -rf "$w"' EXIT
for ex in allreduce:allReduce reducescatter:reduceScatter; do
  if [ -n "${4:-}" ]; then
    "$B/bin/purlinc" "$T/dsl_examples/${ex%%:*}.pl" --emit=cuda --arch=sm_90 --collective=${ex##*:} \
      --policy "$4" -o "$w/${ex%%:*}.cu"
  else
    cp "$T/generated/${ex%%:*}".* "$w/"
  fi
done
F=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20 -I"$w" -I"$T/runtime/include")
for stem in allreduce reducescatter; do for u in "" .latency .direct .pairs .throughput; do echo "$w/$stem$u.cu"; done; done |
  xargs -P "$(nproc)" -I{} /usr/local/cuda/bin/nvcc "${F[@]}" -c {} -o {}.o
cp "$B/lib/libpurlin_generated.a" "$w/gen.a"
(cd "$w" && ar r gen.a allreduce*.cu.o reducescatter*.cu.o)
objs=$(sed -n 's/^build lib\/libpurlin.so: CXX_SHARED_LIBRARY_LINKER__purlin_shared_[A-Za-z]* \([^|]*\)|.*/\1/p' "$B/build.ninja")
(cd "$B" && g++ -fPIC -O3 -DNDEBUG -Wl,--exclude-libs,libcudart_static.a -Wl,--no-undefined -shared \
  -Wl,-soname,libpurlin.so -o "$out/libpurlin.so" $objs -Wl,--whole-archive "$w/gen.a" -Wl,--no-whole-archive \
  /usr/local/cuda/lib/libcudart_static.a -ldl /usr/lib/x86_64-linux-gnu/librt.a -lpthread)
strip "$out/libpurlin.so"
echo "$(basename "$out"): AllReduce/ReduceScatter from $T${4:+ with $4}" > "$out/COMMIT"
ls -la "$out/libpurlin.so"
