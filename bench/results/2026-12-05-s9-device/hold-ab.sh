#!/usr/bin/env bash
# Session 9, device run 3: is the +4 us per replay of the captured direct
# and copy-engine programs (tp-ab.txt, 1c72a89 against 267eb83) the CUDA
# user object that now holds same-process peers' allocations (issue 35
# item 5)? tp_loopback_micro of the pack (3f5a42a) against 1760dd4 built
# with a31f879's direct_registry (nohold: in-process peers not held), 5
# alternating runs each; the graph launch cost of user objects; and first
# the new GPU tests of the pack (vform, failure, lifetime). s8bin (if
# carried, .gpu/s8.txz): tp_loopback_micro of 11d618b (session 8's end).
R=$(cd "$(dirname "$0")/../../.." && pwd)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
cd "$R/.gpu" && tar xJf pack.txz && tar xJf nohold.txz && { [ -f s8.txz ] && tar xJf s8.txz; }; cd "$R"
cat .gpu/packtest/COMMIT | head -1
L=/tmp/hold; mkdir -p $L
for t in vform_test failure_test lifetime_test; do
  timeout 150 .gpu/packtest/$t > $L/$t.txt 2>&1; echo "$t rc=$?"; grep -E "FAIL|: [0-9]+ failure" $L/$t.txt | tail -6
done
for i in 1 2; do .gpu/nohold/graph_user_objects | tee $L/uo.$i.txt; done
SIDES="nohold packtest"; [ -d .gpu/s8bin ] && SIDES="s8bin nohold packtest"
for i in 1 2 3 4 5; do for side in $SIDES; do
  timeout 100 .gpu/$side/tp_loopback_micro > $L/tpx-$side.$i.txt 2>&1; echo "$side $i rc=$?"
done; done
python3 "$R/bench/results/2026-12-04-instances/tp_table.py" $L nohold packtest | grep -E "direct|engine|medians"
[ -d .gpu/s8bin ] && python3 "$R/bench/results/2026-12-04-instances/tp_table.py" $L s8bin packtest | grep -E "direct|engine|medians"
tar czf "$OUT/hold-logs.tgz" -C /tmp hold
