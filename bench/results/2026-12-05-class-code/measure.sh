#!/bin/bash
# measure.sh INCLUDE_DIR ELEM FAMILY: SASS bytes (sm_90) and nvcc seconds of class_probe.cu for one class.
here=$(cd "$(dirname "$0")" && pwd)
INC=$1; E=$2; F=$3
tmp=$(mktemp -d)
s=$(date +%s.%N)
/usr/local/cuda/bin/nvcc -std=c++20 -O3 -arch=sm_90 -cubin -I"$INC" -DELEM="$E" -DFAM="$F" "$here/class_probe.cu" -o "$tmp/o.cubin" || exit 1
e=$(date +%s.%N)
sz=$(readelf -SW "$tmp/o.cubin" 2>/dev/null | python3 -c "
import sys,re
t=0
for l in sys.stdin:
    m=re.search(r'\]\s+(\.text\.\S+)\s+\S+\s+\S+\s+\S+\s+([0-9a-f]+)',l)
    if m: t+=int(m.group(2),16)
print(t)")
echo "$E $F sass_bytes=$sz nvcc_s=$(echo "$e - $s" | bc)"
rm -rf "$tmp"
