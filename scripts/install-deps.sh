#!/usr/bin/env bash
# Installs the Debian packages Purlin builds against, only those missing.
# Used by `make demo` and `make test`; safe to run repeatedly.
set -euo pipefail
pkgs=(cmake ninja-build g++ python3 libclang-14-dev llvm-14-dev llvm-14-tools clang-14 libclang-rt-14-dev
      libfmt-dev libcli11-dev nlohmann-json3-dev catch2 python3-matplotlib python3-pytest
      python3-pip python3-setuptools python3-wheel)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
