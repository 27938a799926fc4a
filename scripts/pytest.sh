#!/usr/bin/env bash
# Runs pytest on the given paths with the first Python 3 that has it
# ($PURLIN_PYTHON, python3 on PATH, Debian's /usr/bin/python3 with
# python3-pytest from scripts/install-deps.sh). Skips are listed with their
# reasons (-rs). Fails, rather than skipping everything, when none has it.
set -uo pipefail
for py in "${PURLIN_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] || continue
  command -v "$py" > /dev/null 2>&1 || continue
  if "$py" -c "import pytest" > /dev/null 2>&1; then
    exec "$py" -m pytest -q -rs -p no:cacheprovider "$@"
  fi
done
echo "pytest.sh: no Python 3 with pytest (scripts/install-deps.sh installs python3-pytest)" >&2
exit 1
