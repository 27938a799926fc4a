/// @file lifetime_test.cu
/// @brief Lifetime of the direct program's peer mappings across processes
/// (docs/runtime.md "Graph capture and the direct program"): the graph that
/// captured a direct call holds its peer mappings (a CUDA user object), so
/// releaseDirect while the graph lives keeps them open and says so on every
/// rank, and a replay after it still writes the right bytes (never through a
/// closed mapping); once the graph and its executable are destroyed,
/// releaseDirect closes them; a destroyed graph's mappings are also closed
/// by the next capture (no releaseDirect needed to reclaim them).
///
/// Runs twice: first with 2 ranks as threads of this process (peers use
/// plain pointers, nothing is mapped, but their allocations are held and
/// counted the same way: issue 35 item 5), then with ranks in separate
/// processes: run without PURLIN_RANK, it starts itself under purlin-launch
/// (next to it) with 2 ranks, which share the GPU when there is one.
///
/// Run: gpu-bin/lifetime_test
#include "coll_test_common.cuh"

using namespace colltest;

namespace {

constexpr std::size_t kCount = std::size_t(2) << 20;  ///< bf16 elements per rank: 4 MiB, 8 MiB gathered (direct)

/// One captured AllGather of the rank's input `in` into `out` (a graph and
/// its executable); Ok or why not.
struct Captured {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void destroy() {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    exec = nullptr;
    graph = nullptr;
  }
};

std::string capture(Communicator& comm, cudaStream_t s, const std::byte* in, std::byte* out, Captured& g) {
  sn::CallArgs a;
  a.in = in;
  a.out = out;
  a.count = kCount;
  a.dtype = DType::BF16;
  CT_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  const Status st = launchColl<PAuto>(Coll::AllGather, comm, a, s);
  CT_CUDA(cudaStreamEndCapture(s, &g.graph));
  if (st != Status::Ok) return std::string("captured launch: ") + sn::lastError();
  CT_CUDA(cudaGraphInstantiate(&g.exec, g.graph, 0));
  return "";
}

/// Replays g once with fresh inputs (seed) and checks every block.
std::string replayAndCheck(const Rank& R, cudaStream_t s, std::byte* in, std::byte* out, Captured& g, uint32_t seed) {
  fill(in, kCount, DType::BF16, seed, R.rank, 0, s);
  CT_CUDA(cudaMemsetAsync(out, 0, kCount * R.n * 2, s));
  CT_CUDA(cudaGraphLaunch(g.exec, s));
  CT_CUDA(cudaStreamSynchronize(s));
  std::vector<std::byte> host(kCount * R.n * 2);
  CT_CUDA(cudaMemcpy(host.data(), out, host.size(), cudaMemcpyDeviceToHost));
  for (int p = 0; p < R.n; ++p)
    for (std::size_t i = 0; i < kCount; i += 4099) {
      std::byte want[2];
      fromFloat(DType::BF16, inputValue(seed, uint32_t(p), i), want);
      if (std::memcmp(&host[(p * kCount + i) * 2], want, 2) != 0)
        return "block " + std::to_string(p) + " element " + std::to_string(i) + " is wrong after the replay";
    }
  return "";
}

void body(Rank& R) {
  auto report = [&](const char* what, const std::string& why) {
    if (!why.empty()) {
      std::printf("FAIL rank %d: %s: %s\n", R.rank, what, why.c_str());
      R.fail();
    } else if (R.rank == 0) {
      std::printf("PASS %s\n", what);
    }
    std::fflush(stdout);
  };
  CommOptions o;
  o.stagingHalfBytes = 16u << 20;
  o.packetHalfBytes = 4u << 20;
  Communicator comm(*R.boot, R.dev, o);
  std::byte *in = nullptr, *out = nullptr, *out2 = nullptr;
  CT_CUDA(cudaMalloc(&in, kCount * 2));
  CT_CUDA(cudaMalloc(&out, kCount * R.n * 2));
  CT_CUDA(cudaMalloc(&out2, kCount * R.n * 2));
  R.boot->barrier();
  Captured g;
  std::string why = capture(comm, R.stream, in, out, g);
  if (why.empty()) why = replayAndCheck(R, R.stream, in, out, g, 3);
  if (why.empty() && (comm.directMappings() != std::size_t(R.n - 1) || comm.directGraphHeld() != comm.directMappings()))
    why = "after the capture: " + std::to_string(comm.directMappings()) + " mappings, " +
          std::to_string(comm.directGraphHeld()) + " held by graphs (expected " + std::to_string(R.n - 1) + " each)";
  report("a captured direct AllGather maps every peer's output, held by its graph", why);

  // releaseDirect while the graph lives: refused on every rank, nothing closed.
  why.clear();
  try {
    comm.releaseDirect();
    why = "releaseDirect returned although a live graph holds mappings";
  } catch (const Error& e) {
    const std::string w = e.what();
    if (e.status() != Status::InvalidArgument || w.find("still held by captured graphs") == std::string::npos)
      why = std::string("releaseDirect: ") + toString(e.status()) + ": " + w;
  }
  if (why.empty() && comm.directMappings() != std::size_t(R.n - 1)) why = "releaseDirect closed a live graph's mapping";
  if (why.empty()) why = replayAndCheck(R, R.stream, in, out, g, 5);
  report("releaseDirect with the graph alive: InvalidArgument on every rank, the replay after it is right", why);

  // The graph and its executable destroyed: releaseDirect closes everything.
  why.clear();
  g.destroy();
  try {
    comm.releaseDirect();
  } catch (const Error& e) {
    why = std::string("releaseDirect after the graph was destroyed: ") + e.what();
  }
  if (why.empty() && comm.directMappings() != 0)
    why = std::to_string(comm.directMappings()) + " mappings left after releaseDirect";
  report("graph destroyed: releaseDirect closes its mappings", why);

  // Reclaimed without releaseDirect: a destroyed graph's mappings are closed
  // by the next capture (on other buffers: the old ones are not reused).
  why = capture(comm, R.stream, in, out, g);
  if (why.empty()) why = replayAndCheck(R, R.stream, in, out, g, 7);
  g.destroy();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // CUDA runs the user object's destructor
  Captured g2;
  if (why.empty()) why = capture(comm, R.stream, in, out2, g2);
  if (why.empty()) why = replayAndCheck(R, R.stream, in, out2, g2, 9);
  if (why.empty() && comm.directMappings() != std::size_t(R.n - 1))
    why = std::to_string(comm.directMappings()) + " mappings after the second capture (expected " +
          std::to_string(R.n - 1) + ": the destroyed graph's were closed)";
  g2.destroy();
  try {
    comm.releaseDirect();
  } catch (const Error& e) {
    if (why.empty()) why = std::string("final releaseDirect: ") + e.what();
  }
  report("a destroyed graph's mappings are closed by the next capture", why);

  // Two direct calls in one capture: one user object holds both outputs'
  // mappings (a graph launch pays for each of its user objects).
  why.clear();
  {
    const std::size_t objects = comm.directGraphHoldObjects();
    Captured both;
    sn::CallArgs a;
    a.in = in;
    a.count = kCount;
    a.dtype = DType::BF16;
    CT_CUDA(cudaStreamBeginCapture(R.stream, cudaStreamCaptureModeThreadLocal));
    a.out = out;
    Status st = launchColl<PAuto>(Coll::AllGather, comm, a, R.stream);
    a.out = out2;
    if (st == Status::Ok) st = launchColl<PAuto>(Coll::AllGather, comm, a, R.stream);
    CT_CUDA(cudaStreamEndCapture(R.stream, &both.graph));
    if (st != Status::Ok) why = std::string("captured launches: ") + sn::lastError();
    if (why.empty() && comm.directGraphHoldObjects() != objects + 1)
      why = std::to_string(comm.directGraphHoldObjects() - objects) + " user objects for one capture of two calls";
    if (why.empty() && comm.directGraphHeld() != std::size_t(2 * (R.n - 1)))
      why = std::to_string(comm.directGraphHeld()) + " mappings held by the graph (expected both outputs' " +
            std::to_string(2 * (R.n - 1)) + ")";
    if (why.empty()) {
      CT_CUDA(cudaGraphInstantiate(&both.exec, both.graph, 0));
      why = replayAndCheck(R, R.stream, in, out2, both, 11);
    }
    both.destroy();
    try {
      comm.releaseDirect();
    } catch (const Error& e) {
      if (why.empty()) why = std::string("releaseDirect after the graph was destroyed: ") + e.what();
    }
    if (why.empty() && comm.directMappings() != 0)
      why = std::to_string(comm.directMappings()) + " mappings left after releaseDirect";
  }
  report("two direct calls in one capture: one user object holds both, released with the graph", why);
  R.boot->barrier();
  cudaFree(in);
  cudaFree(out);
  cudaFree(out2);
}

} // namespace

int main() { return runThreadsThenProcesses("lifetime_test", body); }
