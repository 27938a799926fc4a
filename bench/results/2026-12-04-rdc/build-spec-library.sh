#!/usr/bin/env bash
# spec/libpurlin.so: the build's library with AllReduce and ReduceScatter under spec.json, sm_90.
# As run (paths of that session): /tmp/spec holds purlinc's output of allreduce.pl / reducescatter.pl
# with --policy spec.json; the other objects are build/'s. The cls and lp libraries were linked the
# same way from their own AllReduce and ReduceScatter units.
set -euo pipefail
cd /tmp/spec; B=/work/main/build
F=(-O3 -DNDEBUG "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -std=c++20 -I/tmp/spec -I/work/main/runtime/include)
{ for stem in allreduce reducescatter; do for u in "" .latency .direct .pairs .throughput; do echo "$stem$u.cu"; done; done; } |
  xargs -P 2 -I{} bash -c 'f={}; case $f in *.throughput.cu) x="-rdc=true -DPURLIN_THROUGHPUT_REGISTERS=128 -Xptxas=--device-function-maxrregcount=128";; *) x="";; esac; /usr/local/cuda/bin/nvcc '"${F[*]@Q}"' $x -c $f -o $f.o && echo done $f'
rm -rf a t && mkdir a t
cp $B/lib/libpurlin_generated.a a/gen.a
(cd a && ar r gen.a ../allreduce.cu.o ../allreduce.latency.cu.o ../allreduce.direct.cu.o ../allreduce.pairs.cu.o ../reducescatter.cu.o ../reducescatter.latency.cu.o ../reducescatter.direct.cu.o ../reducescatter.pairs.cu.o)
(cd t && ar x $B/lib/libpurlin_generated_throughput.a && rm -f cmake_device_link.o && cp ../allreduce.throughput.cu.o ../reducescatter.throughput.cu.o . &&
 /usr/local/cuda/bin/nvcc "--generate-code=arch=compute_90,code=[compute_90,sm_90]" -Xcompiler=-fPIC -shared -dlink *.throughput.cu.o -o cmake_device_link.o -lcudadevrt &&
 ar rcs tp.a *.o)
O="runtime/CMakeFiles/purlin_host_core.dir/src/error.cpp.o runtime/CMakeFiles/purlin_host_core.dir/src/types.cpp.o runtime/CMakeFiles/purlin_host_core.dir/src/workspace.cpp.o runtime/CMakeFiles/purlin_host_core.dir/src/bootstrap.cpp.o runtime/CMakeFiles/purlin_host_core.dir/src/in_process_bootstrap.cpp.o runtime/CMakeFiles/purlin_host_core.dir/src/unix_socket_bootstrap.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/cuda_check.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/communicator.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/direct_registry.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/kernel_modules.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/stream_memops.cpp.o runtime/CMakeFiles/purlin_runtime_cuda.dir/src/c_api.cpp.o generated/CMakeFiles/purlin_shared.dir/__/runtime/src/shared_library.cpp.o"
mkdir -p out
(cd $B && g++ -fPIC -O3 -DNDEBUG -Wl,--exclude-libs,libcudart_static.a -Wl,--no-undefined -shared -Wl,-soname,libpurlin.so -o /tmp/spec/out/libpurlin.so $O \
  -Wl,--whole-archive /tmp/spec/a/gen.a /tmp/spec/t/tp.a -Wl,--no-whole-archive /usr/local/cuda/lib/libcudart_static.a -ldl /usr/lib/x86_64-linux-gnu/librt.a -lpthread)
ls -la out/libpurlin.so
