#!/usr/bin/env bash
# pack-gpu.sh [BUILD] [OUT]: the GPU programs of BUILD (BUILD/gpu-bin/*) and
# the library (BUILD/lib/libpurlin.so), stripped, in one xz tarball for the
# device tool's `carry` (64 MiB at most): OUT, .gpu/pack.txz by default
# (.gpu/ is ignored by git). On the device:
#   mkdir -p .gpu && tar xJf .gpu/pack.txz -C .gpu
#   bash scripts/gpu-all.sh .gpu/packtest ...            (the GPU suite)
#   PURLIN_LIBRARY=.gpu/packtest/libpurlin.so python3 -m pytest python/tests
# packtest/COMMIT records HEAD and the modified tracked files at packing
# time (pack right after building); prints the tarball's size and fails
# over the carry limit.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
out=${2:-.gpu/pack.txz}
[ -d "$build/gpu-bin" ] && [ -f "$build/lib/libpurlin.so" ] || {
  echo "pack-gpu: $build/gpu-bin or $build/lib/libpurlin.so missing (build first: make build)" >&2
  exit 1
}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/packtest" "$(dirname "$out")"
cp -a "$build"/gpu-bin/. "$stage/packtest/"
cp "$build/lib/libpurlin.so" "$stage/packtest/"
git rev-parse HEAD > "$stage/packtest/COMMIT"
git status --porcelain --untracked-files=no | sed 's/^/dirty: /' >> "$stage/packtest/COMMIT"
find "$stage/packtest" -type f \( -perm -u+x -o -name '*.so' \) -exec strip --strip-unneeded {} + 2>/dev/null || true
tar -C "$stage" -cf - packtest | xz -T2 --lzma2=preset=6,dict=256MiB > "$out"
bytes=$(stat -c %s "$out")
echo "pack-gpu: $out, $((bytes / 1048576)) MiB, built at $(head -1 "$stage/packtest/COMMIT")"
if [ "$bytes" -gt $((64 * 1048576)) ]; then
  echo "pack-gpu: over the 64 MiB carry limit" >&2
  exit 1
fi
