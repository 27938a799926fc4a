#!/usr/bin/env bash
# The sanitizer part of `make test`: the compiler's and the runtime's host
# C++ built with clang-14, AddressSanitizer and UndefinedBehaviorSanitizer
# (PURLIN_SANITIZE) in its own tree, every CPU unit test binary run under
# them (policy, front end and sema, IR, codegen, runtime host: every unit),
# and the two libFuzzer targets (PURLIN_FUZZ: fuzz/) for
# PURLIN_FUZZ_SECONDS each (default 60).
#   scripts/sanitize.sh [BUILD_DIR]     (default build-san)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build-san}
SECONDS_EACH=${PURLIN_FUZZ_SECONDS:-60}
JOBS=${JOBS:-$(nproc)}
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
  -DPURLIN_SANITIZE=ON -DPURLIN_FUZZ=ON -DPURLIN_FUZZ_SECONDS="$SECONDS_EACH" >/dev/null
TARGETS=(purlin_policy_test purlin_sema_test purlin_ir_test codegen_test pl_fuzz policy_fuzz)
# The runtime's host tests exist only where CUDA's headers are (as in CI).
if cmake --build "$B" --target help | grep -q '^purlin_runtime_unit_tests:'; then
  TARGETS+=(purlin_runtime_unit_tests purlin-launch)
fi
cmake --build "$B" -j "$JOBS" --target "${TARGETS[@]}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$B" && ctest --output-on-failure -j "$JOBS" \
  -R '^(runtime\.|purlin_policy_test|purlin_sema_test|purlin_ir_test|codegen_test|fuzz\.)'
