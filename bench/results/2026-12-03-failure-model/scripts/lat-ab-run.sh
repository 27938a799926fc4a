#!/usr/bin/env bash
# alternating latency runs of the binaries named after $3 (mode u = unchecked, c = checked): run.sh OUT REPS MODE V...
set -u
d=$(dirname "$0"); out=$1; reps=$2; mode=$3; shift 3
[ "$mode" = u ] && export LAT_FLOOR_UNCHECKED=1
mkdir -p $out
for i in $(seq 1 $reps); do
  for v in "$@"; do timeout 60 $d/$v --only rt- --loopback > $out/$v.$i.log 2>&1 || echo "$v run $i failed"; done
done
