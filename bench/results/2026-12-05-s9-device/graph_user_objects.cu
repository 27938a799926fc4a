// What a CUDA user object retained by a graph costs per launch of its
// executable (session 9: the direct program's graphs hold peer allocations
// through user objects, DirectRegistry::holdInGraph). One graph of K empty
// kernel nodes (K = 1, 16) holding U user objects (U = 0, 1, 16); per
// variant, reps x (calls launches, then one synchronize): microseconds per
// launch, median / min / max over reps.
//   row,<kernels>,<user objects>,<median us>,<min us>,<max us>
// Build: nvcc -O2 -arch=sm_90 graph_user_objects.cu -o graph_user_objects
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

__global__ void empty() {}
static void dropped(void*) {}

int main() {
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int reps = 7, calls = 2000;
  for (int kernels : {1, 16})
    for (int objects : {0, 1, 16}) {
      cudaGraph_t g;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int k = 0; k < kernels; ++k) empty<<<1, 32, 0, s>>>();
      CK(cudaStreamEndCapture(s, &g));
      for (int u = 0; u < objects; ++u) {
        cudaUserObject_t o;
        CK(cudaUserObjectCreate(&o, nullptr, dropped, 1, cudaUserObjectNoDestructorSync));
        CK(cudaGraphRetainUserObject(g, o, 1, cudaGraphUserObjectMove));
      }
      cudaGraphExec_t x;
      CK(cudaGraphInstantiate(&x, g, 0));
      for (int w = 0; w < 100; ++w) CK(cudaGraphLaunch(x, s));
      CK(cudaStreamSynchronize(s));
      std::vector<double> us;
      for (int r = 0; r < reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) cudaGraphLaunch(x, s);
        CK(cudaStreamSynchronize(s));
        us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / calls);
      }
      std::sort(us.begin(), us.end());
      std::printf("row,%d,%d,%.3f,%.3f,%.3f\n", kernels, objects, us[us.size() / 2], us.front(), us.back());
      CK(cudaGraphExecDestroy(x));
      CK(cudaGraphDestroy(g));
    }
  return 0;
}
