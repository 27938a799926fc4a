#!/bin/bash
# nvcc of AllReduce and AllGather units, before (OLD: a tree of runtime/ and generated/, default
# /tmp/sass/old = 995c5cd) and after (HEAD), alternating rounds
for round in 1 2; do
  for tree in ${OLD:-/tmp/sass/old} /work/main; do
    tag=$([ $tree = /work/main ] && echo after || echo before)
    for s in allreduce allgather; do
      tot=0
      for u in "" latency throughput direct pairs; do
        a=$(date +%s.%N)
        /usr/local/cuda/bin/nvcc -std=c++20 -O3 -DNDEBUG -arch=sm_90 -c -I$tree/runtime/include -I$tree/generated $tree/generated/$s${u:+.$u}.cu -o /tmp/ab17/x.o || echo FAIL
        b=$(date +%s.%N); t=$(echo "$b - $a" | bc); tot=$(echo "$tot + $t" | bc)
        printf "round %d %s %s.%s %.1f\n" $round $tag $s "$u" $t
      done
      printf "round %d %s %s SUM %.1f\n" $round $tag $s $tot
    done
  done
done
