#!/usr/bin/env bash
# @file demo.sh
# @brief `make demo`: runs purlinc on every example in dsl_examples/.
# Usage: scripts/demo.sh [BUILD_DIR]   (default: build)
#
# The demo is a list of steps; each step is a function `step_NAME` taking the
# example file, listed in STEPS below. To add a step (IR, verify, CUDA, GPU
# run), write its function and append its name to STEPS.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
PURLINC=$BUILD/bin/purlinc
if [ ! -x "$PURLINC" ]; then
  echo "demo: $PURLINC not found; run 'make demo' (or 'make build') first" >&2
  exit 1
fi

# Front end: the parsed declarations with their locations.
step_ast() {
  "$PURLINC" "$1" --emit=ast
}

STEPS=(ast)

status=0
for pl in dsl_examples/*.pl; do
  for step in "${STEPS[@]}"; do
    echo "==> purlinc $pl [$step]"
    if ! "step_$step" "$pl"; then
      echo "demo: step '$step' failed on $pl" >&2
      status=1
    fi
  done
  echo
done
exit $status
