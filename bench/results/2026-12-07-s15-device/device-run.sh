#!/usr/bin/env bash
# Session 15's device run: session 14's steps (../2026-12-06-s14-device/
# device-run.sh: atom, suite, pairs, lat, inplace, pytest, ...) on this
# session's packs, plus
#   ab: scripts/gpu-ab-latency.sh, prev's lat_floor_micro against this
#       pack's, AB_REPS alternating runs (default 5), --loopback --unchecked
# Extra libraries for the pairs step, each a .gpu/NAME.txz holding
# NAME/libpurlin.so, unpacked here when carried:
#   prev   - e564c9d's library and lat_floor_micro / tp_loopback_micro (the
#            build before this session's kernel change)
#   spec15 - AllReduce and ReduceScatter of this session's code specialized
#            for the 8 pairs of ../2026-12-04-rdc/spec.json
#            (build-spec-library.sh): issue 33's comparator
# e.g. LIBS="prev packtest spec15" LIBS_CSV=prev,packtest,spec15.
#   device-run.sh STEP...
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
for lib in prev spec15; do
  if [ -f "$R/.gpu/$lib.txz" ] && [ ! -d "$R/.gpu/$lib" ]; then tar -C "$R/.gpu" -xJf "$R/.gpu/$lib.txz"; fi
done
for s in "$@"; do
  case $s in
    ab) [ -d "$R/.gpu/packtest" ] || tar -C "$R/.gpu" -xJf "$R/.gpu/pack.txz"
        timeout ${AB_T:-400} bash "$R/scripts/gpu-ab-latency.sh" "$R/.gpu/prev/lat_floor_micro" \
          "$R/.gpu/packtest/lat_floor_micro" "${AB_REPS:-5}" "$OUT/lat-ab" --loopback --unchecked > "$OUT/lat-ab.txt" 2>&1
        echo "ab rc=$?"; tail -30 "$OUT/lat-ab.txt";;
    *) bash "$R/bench/results/2026-12-06-s14-device/device-run.sh" "$s";;
  esac
done
