#!/usr/bin/env bash
# Before a device session (CPU, about 8 min on 2 cores): the libraries of
# device-run.sh's `pairs` step, from a built tree of this commit, packed for
# `carry`: .gpu/libs.txz = variant/ (class-code.patch, every experiment
# macro: build-variant-library.sh) and spec/ (AllReduce and ReduceScatter
# specialized for the 8 measured pairs: build-spec-library.sh).
#   prepare-libs.sh [BUILD]
set -euo pipefail
R=$(cd "$(dirname "$0")/../../.." && pwd); B=${1:-$R/build}
bash "$R/bench/results/2026-12-06-compile/build-variant-library.sh" "$B" "$R/.gpu/variant"
bash "$R/bench/results/2026-12-04-rdc/build-spec-library.sh" "$B" "$R/.gpu/spec"
strip --strip-unneeded "$R/.gpu/variant/libpurlin.so" "$R/.gpu/spec/libpurlin.so"
tar -C "$R/.gpu" -cf - variant spec | xz -T2 > "$R/.gpu/libs.txz"
ls -la "$R/.gpu/libs.txz"
