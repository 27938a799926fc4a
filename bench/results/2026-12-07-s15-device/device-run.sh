#!/usr/bin/env bash
# Session 15's device run: session 14's steps (../2026-12-06-s14-device/
# device-run.sh: atom, suite, pairs, lat, inplace, pytest, ...) on this
# session's packs. Extra libraries for the pairs step, each a .gpu/NAME.txz
# holding NAME/libpurlin.so, unpacked here when carried:
#   prev   - e564c9d's library (the build before this session's kernel change)
#   spec15 - AllReduce and ReduceScatter of this session's code specialized
#            for the 8 pairs of ../2026-12-04-rdc/spec.json
#            (build-spec-library.sh): issue 33's comparator
# e.g. LIBS="base prev packtest spec15" LIBS_CSV=base,prev,packtest,spec15.
#   device-run.sh STEP...
R=$(cd "$(dirname "$0")/../../.." && pwd)
for lib in prev spec15; do
  if [ -f "$R/.gpu/$lib.txz" ] && [ ! -d "$R/.gpu/$lib" ]; then tar -C "$R/.gpu" -xJf "$R/.gpu/$lib.txz"; fi
done
exec bash "$R/bench/results/2026-12-06-s14-device/device-run.sh" "$@"
