#!/bin/bash
# usage: varbuild.sh NAME [patch-python-file]  -- builds lat_floor_micro against a copy of runtime/include, patched
set -e
NAME=$1; PATCH=$2
D=/tmp/var/$NAME
rm -rf $D && mkdir -p $D && cp -r /work/main/runtime/include $D/include
if [ -n "$PATCH" ]; then python3 $PATCH $D/include; fi
/usr/local/cuda/bin/nvcc -I$D/include -O3 -DNDEBUG --generate-code=arch=compute_90,code=[compute_90,sm_90] -std=c++20 -x cu \
  /work/main/bench/micro/lat_floor_micro.cu -o /work/main/.gpu/micro/lat_floor_micro_$NAME
echo built $NAME
