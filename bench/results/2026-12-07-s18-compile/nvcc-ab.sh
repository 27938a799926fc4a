#!/bin/bash
# nvcc of AllReduce and AllGather units, before (18b15c7: git archive 18b15c7 runtime generated | tar -x -C /tmp/old18)
# and after (HEAD), alternating rounds: the s17 script with OLD=/tmp/old18.
OLD=${OLD:-/tmp/old18} exec bash "$(dirname "$0")/../2026-12-07-s17-compile/nvcc-ab.sh"
