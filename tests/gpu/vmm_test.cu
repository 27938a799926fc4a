/// @file vmm_test.cu
/// @brief cuMem (VMM) buffers with the direct program (runtime/src/
/// vmm_share.h; what torch's expandable segments allocate): outputs made
/// of several separately mapped cuMem chunks, created exportable as POSIX
/// file descriptors, are registered and captured like cudaMalloc ones; the
/// peers' chunks are imported (processes) or reached by pointer (threads);
/// the results are right. A cuMem buffer created without that handle type
/// is refused alike on every rank (registration) or staged (capture).
///
/// Runs with 2 ranks as threads of this process, then (run without
/// PURLIN_RANK) restarts itself under purlin-launch with 2 processes,
/// which share the GPU when there is one.
///
/// Run: gpu-bin/vmm_test
#include "coll_test_common.cuh"

#include <cuda.h>
#include <cudaTypedefs.h>
using namespace colltest;

namespace {

constexpr std::size_t kCount = std::size_t(2) << 20;  ///< bf16 elements per rank: 4 MiB, 8 MiB gathered (direct)

template <class Fn>
Fn driverFn(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q{};
  if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
      q != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(fn);
}

/// `bytes` of cuMem memory on `dev` as chunks of the allocation
/// granularity, each created and mapped on its own (like an expandable
/// segment's pages), contiguous in one reserved range.
struct VmmBuffer {
  CUdeviceptr va = 0;
  std::size_t bytes = 0;
  std::vector<CUmemGenericAllocationHandle> chunks;
  std::size_t chunkBytes = 0;

  std::string make(std::size_t want, int dev, bool exportable) {
    auto create = driverFn<PFN_cuMemCreate_v10020>("cuMemCreate");
    auto granularity = driverFn<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity");
    auto reserve = driverFn<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve");
    auto map = driverFn<PFN_cuMemMap_v10020>("cuMemMap");
    auto setAccess = driverFn<PFN_cuMemSetAccess_v10020>("cuMemSetAccess");
    if (!create || !granularity || !reserve || !map || !setAccess) return "the driver lacks the cuMem entry points";
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev;
    prop.requestedHandleTypes = exportable ? CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR : CU_MEM_HANDLE_TYPE_NONE;
    size_t g = 0;
    if (granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || g == 0)
      return "cuMemGetAllocationGranularity failed";
    chunkBytes = g;
    bytes = (want + g - 1) / g * g;
    if (reserve(&va, bytes, 0, 0, 0) != CUDA_SUCCESS) return "cuMemAddressReserve failed";
    for (std::size_t off = 0; off < bytes; off += g) {
      CUmemGenericAllocationHandle h{};
      if (create(&h, g, &prop, 0) != CUDA_SUCCESS) return "cuMemCreate failed";
      chunks.push_back(h);
      if (map(va + off, g, 0, h, 0) != CUDA_SUCCESS) return "cuMemMap failed";
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (setAccess(va, bytes, &access, 1) != CUDA_SUCCESS) return "cuMemSetAccess failed";
    return "";
  }
  std::byte* ptr() const { return reinterpret_cast<std::byte*>(va); }
  void free() {
    auto unmap = driverFn<PFN_cuMemUnmap_v10020>("cuMemUnmap");
    auto release = driverFn<PFN_cuMemRelease_v10020>("cuMemRelease");
    auto addressFree = driverFn<PFN_cuMemAddressFree_v10020>("cuMemAddressFree");
    if (va && unmap) unmap(va, bytes);
    for (auto h : chunks)
      if (release) release(h);
    if (va && addressFree) addressFree(va, bytes);
    va = 0;
    chunks.clear();
  }
};

Status allGather(Communicator& comm, cudaStream_t s, const std::byte* in, std::byte* out) {
  sn::CallArgs a;
  a.in = in;
  a.out = out;
  a.count = kCount;
  a.dtype = DType::BF16;
  return launchColl<PAuto>(Coll::AllGather, comm, a, s);
}

/// Every block of `out` after an AllGather of inputs filled with `seed`.
std::string check(const Rank& R, const std::byte* out, uint32_t seed) {
  std::vector<std::byte> host(kCount * R.n * 2);
  CT_CUDA(cudaMemcpy(host.data(), out, host.size(), cudaMemcpyDeviceToHost));
  for (int p = 0; p < R.n; ++p)
    for (std::size_t i = 0; i < kCount; i += 4099) {
      std::byte want[2];
      fromFloat(DType::BF16, inputValue(seed, uint32_t(p), i), want);
      if (std::memcmp(&host[(p * kCount + i) * 2], want, 2) != 0)
        return "block " + std::to_string(p) + " element " + std::to_string(i) + " is wrong";
    }
  return "";
}

void body(Rank& R) {
  auto report = [&](const char* what, const std::string& why) {
    reportCase(R.rank, what, why, R.failures);
    std::fflush(stdout);
  };
  CommOptions o;
  o.stagingHalfBytes = 16u << 20;
  o.packetHalfBytes = 4u << 20;
  o.logPlans = true;
  o.planLogPath = "/dev/null";  // lastPlan() says which program ran
  Communicator comm(*R.boot, R.dev, o);
  std::byte* in = nullptr;
  CT_CUDA(cudaMalloc(&in, kCount * 2));
  VmmBuffer out, plain;
  // The output starts 2 KiB into the range, so it ends inside the last chunk.
  const std::size_t outBytes = kCount * R.n * 2, skew = 2048;
  std::string why = out.make(outBytes + skew, R.dev, true);
  if (why.empty()) why = plain.make(outBytes, R.dev, false);
  report("cuMem buffers made (chunks of the allocation granularity)", why);
  if (!why.empty()) return;
  std::byte* o1 = out.ptr() + skew;
  R.boot->barrier();

  // Captured: the exchange imports (or, in one process, reaches) every
  // peer's chunks; the direct program runs.
  why.clear();
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  fill(in, kCount, DType::BF16, 3, R.rank, 0, R.stream);
  CT_CUDA(cudaStreamSynchronize(R.stream));
  CT_CUDA(cudaStreamBeginCapture(R.stream, cudaStreamCaptureModeThreadLocal));
  Status st = allGather(comm, R.stream, in, o1);
  CT_CUDA(cudaStreamEndCapture(R.stream, &graph));
  if (st != Status::Ok) why = std::string("captured launch: ") + sn::lastError();
  if (why.empty() && comm.lastPlan().find("direct (") == std::string::npos)
    why = "the captured call did not take the direct program: " + comm.lastPlan();
  if (why.empty() && comm.directMappings() != std::size_t(R.n - 1))
    why = std::to_string(comm.directMappings()) + " peer mappings (expected " + std::to_string(R.n - 1) + ")";
  if (why.empty()) {
    CT_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (uint32_t seed : {5u, 6u}) {
      fill(in, kCount, DType::BF16, seed, R.rank, 0, R.stream);
      CT_CUDA(cudaMemsetAsync(o1, 0, outBytes, R.stream));
      CT_CUDA(cudaGraphLaunch(exec, R.stream));
      CT_CUDA(cudaStreamSynchronize(R.stream));
      if (why.empty()) why = check(R, o1, seed);
    }
  }
  if (exec) cudaGraphExecDestroy(exec);
  if (graph) cudaGraphDestroy(graph);
  try {
    comm.releaseDirect();
  } catch (const Error& e) {
    if (why.empty()) why = std::string("releaseDirect: ") + e.what();
  }
  if (why.empty() && comm.directMappings() != 0)
    why = std::to_string(comm.directMappings()) + " mappings left after releaseDirect";
  report("a captured AllGather into cuMem chunks takes the direct program and replays right", why);

  // Registered: eager calls on it take the direct program.
  why.clear();
  uint64_t handle = 0;
  try {
    handle = comm.registerBuffer(out.ptr(), out.bytes);
  } catch (const Error& e) {
    why = std::string("registerBuffer: ") + e.what();
  }
  if (why.empty()) {
    fill(in, kCount, DType::BF16, 8, R.rank, 0, R.stream);
    st = allGather(comm, R.stream, in, o1);
    CT_CUDA(cudaStreamSynchronize(R.stream));
    if (st != Status::Ok) why = std::string("eager launch: ") + sn::lastError();
    if (why.empty() && comm.lastPlan().find("direct (") == std::string::npos)
      why = "the registered call did not take the direct program: " + comm.lastPlan();
    if (why.empty()) why = check(R, o1, 8);
    try {
      comm.deregisterBuffer(handle);
    } catch (const Error& e) {
      if (why.empty()) why = std::string("deregisterBuffer: ") + e.what();
    }
  }
  report("a registered cuMem buffer: eager calls take the direct program", why);

  // Without the POSIX-fd handle type: refused alike on every rank; a
  // captured call stages (right result, nothing mapped).
  why.clear();
  try {
    (void)comm.registerBuffer(plain.ptr(), plain.bytes);
    why = "registerBuffer accepted cuMem memory that cannot be exported";
  } catch (const Error& e) {
    const std::string w = e.what();
    if (e.status() != Status::InvalidArgument || w.find("POSIX file descriptors") == std::string::npos)
      why = std::string("registerBuffer: ") + toString(e.status()) + ": " + w;
  }
  report("cuMem memory without a POSIX-fd handle type: registration refused on every rank", why);
  R.boot->barrier();
  CT_CUDA(cudaDeviceSynchronize());
  out.free();
  plain.free();
  cudaFree(in);
}

} // namespace

int main() { return runThreadsThenProcesses("vmm_test", body); }
