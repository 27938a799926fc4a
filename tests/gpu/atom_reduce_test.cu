/// @file atom_reduce_test.cu
/// @brief Atom::reduce<E, op> against a host reference (fp32 accumulation in
/// ascending source order, compared bitwise) for every datapath, and for the
/// pipelined ones also Atom::reduce<Classes> (the call's class dispatched
/// once per range into the any-depth range loop the printed programs run,
/// at depths 2, 3, 4 per lane and 8): E in
/// {float, __half, __nv_bfloat16}, op in {Sum, Max, Min}, 1..8 sources, odd
/// element counts, element-aligned offsets (co-aligned and not), in place,
/// 1 to 3 CTAs; sources local, mixed local/peer, and a peer destination;
/// and Atom::reducePair<Classes> (two sources, 16-byte vectors); and
/// withReductionClass's class dispatch for sets of classes.
/// Bytes around the destination must stay unchanged. Prints a PASS/FAIL/SKIP
/// line per (datapath, locality, type, op); exits non-zero on any failure.
#include <cstring>
#include <type_traits>

#include "atom_test_common.cuh"

namespace pa = purlin::atom;
using purlin::RedOp;
using namespace atomtest;

namespace {

constexpr int kRegions = pa::kMaxSources + 1;  // sources 0..7, destination 8
constexpr std::size_t kCap = (1u << 20) + 4096;  // bytes per region
constexpr int kGuard = 64;

struct SrcPtrs {
  const std::byte* p[pa::kMaxSources];
};

/// Each CTA reduces its share of the elements (split at element
/// boundaries); with kLanes, each half of the CTA (a lane of lane.cuh, its
/// own workspace of A::kWorkspaceBytes) half of that share.
template <class E>
__host__ __device__ constexpr purlin::DType dtypeOfElem() {
  return std::is_same_v<E, float> ? purlin::DType::F32 : std::is_same_v<E, __half> ? purlin::DType::F16 : purlin::DType::BF16;
}

/// kDispatch: through Atom::reduce<Classes> with the classes of E's sum and
/// extremum, the call's (dtype, op) a run-time Reduction.
template <class A, class E, RedOp Op, bool kLanes, bool kDispatch>
__global__ void __launch_bounds__(1024) reduceKernel(std::byte* dst, SrcPtrs srcs, std::size_t bytes, int n) {
  extern __shared__ __align__(16) std::byte ws[];
  if constexpr (pa::kAtomCompiled<A>) {
    const std::size_t count = bytes / sizeof(E);
    const unsigned parts = kLanes ? 2u : 1u, per = blockDim.x / parts, part = threadIdx.x / per;
    const std::size_t share = gridDim.x * std::size_t(parts), k = blockIdx.x * std::size_t(parts) + part;
    const std::size_t lo = count * k / share, hi = count * (k + 1) / share;
    const std::byte* mine[pa::kMaxSources];
    for (int p = 0; p < n; ++p) mine[p] = srcs.p[p] + lo * sizeof(E);
    // the last share also owns the trailing partial element, which must stay untouched
    const std::size_t myBytes = (hi - lo) * sizeof(E) + (k + 1 == share ? bytes % sizeof(E) : 0);
    const pa::Slice slice{threadIdx.x % per, per};
    if constexpr (kDispatch) {
      constexpr uint64_t kClasses = purlin::reductionClassesOf(
          1u << int(dtypeOfElem<E>()), (1u << int(RedOp::Sum)) | (1u << int(RedOp::Max)) | (1u << int(RedOp::Min)));
      A::template reduce<kClasses>(purlin::reductionOf(dtypeOfElem<E>(), Op), dst + lo * sizeof(E), mine, myBytes, n,
                                   ws + part * A::kWorkspaceBytes, slice);
    } else {
      A::template reduce<E, Op>(dst + lo * sizeof(E), mine, myBytes, n, ws + part * A::kWorkspaceBytes, slice);
    }
  } else {
    __trap();
  }
}

struct Pools {
  std::byte* dev[2][kRegions] = {};             // region r on GPU g
  std::vector<unsigned char> host[kRegions];    // same content on both GPUs
};

struct Locality {
  const char* name;
  bool mixedSources;  // source p lives on GPU p % 2
  int dstDev;
};

template <class E>
const char* typeName() {
  return std::is_same_v<E, float> ? "f32" : std::is_same_v<E, __half> ? "f16" : "bf16";
}
const char* opName(RedOp op) { return op == RedOp::Sum ? "sum" : op == RedOp::Max ? "max" : "min"; }

template <class E, RedOp Op>
E hostReduce(const Pools& pools, int n, const int* srcOff, std::size_t i) {
  E xs[pa::kMaxSources];
  for (int p = 0; p < n && p < pa::kMaxSources; ++p) std::memcpy(&xs[p], pools.host[p].data() + srcOff[p] + i * sizeof(E), sizeof(E));
  return pa::referenceReduce<E, Op>(xs, n);
}

/// One case. inPlace >= 0: the destination is source `inPlace` itself.
template <class A, class E, RedOp Op, bool kLanes, bool kDispatch>
bool runOne(Pools& pools, const Locality& loc, int n, std::size_t count, int extraBytes, const int* srcOff,
            int dstOff, int inPlace, int threads, int grid) {
  const std::size_t bytes = count * sizeof(E) + extraBytes;
  SrcPtrs sp{};
  int srcDev[pa::kMaxSources];
  for (int p = 0; p < n; ++p) {
    srcDev[p] = loc.mixedSources ? p % 2 : 0;
    sp.p[p] = pools.dev[srcDev[p]][p] + srcOff[p];
  }
  const int dRegion = inPlace >= 0 ? inPlace : kRegions - 1;
  const int dDev = inPlace >= 0 ? srcDev[inPlace] : loc.dstDev;
  const int dOff = inPlace >= 0 ? srcOff[inPlace] : dstOff;
  std::byte* dstBase = pools.dev[dDev][dRegion];
  const std::size_t lo = dOff >= kGuard ? dOff - kGuard : 0, hi = dOff + bytes + kGuard;
  std::vector<unsigned char> before(hi - lo), after(hi - lo);
  ATOMTEST_CK(cudaMemcpy(before.data(), dstBase + lo, hi - lo, cudaMemcpyDefault));
  auto k = reduceKernel<A, E, Op, kLanes, kDispatch>;
  const std::size_t smem = A::kWorkspaceBytes * (kLanes ? 2 : 1);
  if (!allowSmem(k, smem)) { std::printf("  cannot set shared memory\n"); return false; }
  ATOMTEST_CK(cudaSetDevice(0));
  k<<<grid, threads, smem>>>(dstBase + dOff, sp, bytes, n);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  ATOMTEST_CK(cudaMemcpy(after.data(), dstBase + lo, hi - lo, cudaMemcpyDefault));
  bool ok = true;
  std::vector<unsigned char> want(before);
  for (std::size_t i = 0; i < count; ++i) {
    const E e = hostReduce<E, Op>(pools, n, srcOff, i);
    std::memcpy(want.data() + (dOff - lo) + i * sizeof(E), &e, sizeof(E));
  }
  for (std::size_t b = 0; b < want.size(); ++b) {
    if (after[b] != want[b]) {
      std::printf("  mismatch: n=%d count=%zu extra=%d dstOff=%d src0Off=%d inPlace=%d threads=%d grid=%d at "
                  "byte %+ld: got 0x%02x want 0x%02x\n",
                  n, count, extraBytes, dOff, srcOff[0], inPlace, threads, grid,
                  static_cast<long>(b + lo) - dOff, after[b], want[b]);
      ok = false;
      break;
    }
  }
  if (inPlace >= 0) {  // restore the source for later cases
    ATOMTEST_CK(cudaMemcpy(dstBase + lo, pools.host[dRegion].data() + lo, hi - lo, cudaMemcpyDefault));
  }
  return ok;
}

/// --small: only the small counts (compute-sanitizer runs, gpu-all.sh):
/// racecheck of every count did not finish in 530 s on one H200.
bool gSmallOnly = false;

template <class A, class E, RedOp Op, bool kLanes, bool kDispatch>
bool runOp(const char* name, Pools& pools, const Locality& loc) {
  static const std::size_t smallCounts[] = {0, 1, 3, 8, 9, 1003, 4097};
  static const std::size_t largeCounts[] = {65536 + 7, (1u << 20) / sizeof(E) - 512 + 5};
  static const int threadsCycle[] = {256, 96, 1024, 512};
  static const int nsCycle[] = {1, 2, 3, 8};
  constexpr int es = sizeof(E);
  int cases = 0, idx = 0;
  bool ok = true;
  for (int n : nsCycle) {
    auto run = [&](std::size_t count, int extra, int so, int dofs, int inPlace, bool skewOne) {
      int srcOff[pa::kMaxSources];
      for (int p = 0; p < n; ++p) srcOff[p] = kGuard + so;
      if (skewOne) srcOff[n - 1] = kGuard + (so + es) % 16;
      const int threads = threadsCycle[idx % 4], grid = 1 + idx % 3;
      ++idx;
      ++cases;
      return runOne<A, E, Op, kLanes, kDispatch>(pools, loc, n, count, extra, srcOff, kGuard + dofs, inPlace, threads, grid);
    };
    for (std::size_t c : smallCounts) {
      ok = ok && run(c, 0, 0, 0, -1, false);                      // all aligned
      ok = ok && run(c, es == 4 ? 3 : 1, 4, 4, -1, false);          // co-aligned at 4 bytes, partial trailing element
      ok = ok && run(c, 0, es, 3 * es % 16, -1, false);           // not co-aligned with dst
      ok = ok && run(c, 0, 8, 8, -1, n > 1);                        // one source skewed
      ok = ok && run(c, 0, 12, 0, 0, false);                        // in place into source 0
      ok = ok && run(c, 0, es, 0, n - 1, false);                    // in place into the last source
    }
    if (!gSmallOnly && (Op == RedOp::Sum || n == 8)) {
      for (std::size_t c : largeCounts) {
        ok = ok && run(c, 0, 4, 4, -1, false);
        ok = ok && run(c, 0, 0, es, -1, false);  // not co-aligned
        ok = ok && run(c, 0, 0, 0, n - 1, false);
      }
    }
  }
  std::printf("%s reduce %-14s %-5s %-4s %s cases=%d\n", ok ? "PASS" : "FAIL", name, loc.name, typeName<E>(),
              opName(Op), cases);
  return ok;
}

template <class A, bool kLanes = false, bool kDispatch = false>
bool runDatapath(const char* name, Pools& pools, const Locality& loc, int gpuArch) {
  if (gpuArch < A::kMinArch) {
    std::printf("SKIP reduce %-14s %-5s: needs sm_%d, device is sm_%d\n", name, loc.name, A::kMinArch / 10,
                gpuArch / 10);
    return true;
  }
  bool ok = true;
  ok &= runOp<A, float, RedOp::Sum, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, float, RedOp::Max, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, float, RedOp::Min, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __half, RedOp::Sum, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __half, RedOp::Max, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __half, RedOp::Min, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __nv_bfloat16, RedOp::Sum, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __nv_bfloat16, RedOp::Max, kLanes, kDispatch>(name, pools, loc);
  ok &= runOp<A, __nv_bfloat16, RedOp::Min, kLanes, kDispatch>(name, pools, loc);
  return ok;
}

bool runAll(Pools& pools, const Locality& loc, int gpuArch) {
  bool ok = true;
  ok &= runDatapath<pa::Atom<pa::Generic>>("Generic", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Ampere>>("Ampere", pools, loc, gpuArch);
  ok &= runDatapath<AmpereSmall>("Ampere<2,1K>", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Hopper>>("Hopper", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Native>>("Native", pools, loc, gpuArch);
  ok &= runDatapath<HopperSmall>("Hopper<3,2K>", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Blackwell>>("Blackwell", pools, loc, gpuArch);
  ok &= runDatapath<CandL2>("cand-L2hint", pools, loc, gpuArch);
  ok &= runDatapath<CandPf>("cand-bulkpf", pools, loc, gpuArch);
  // The TMA datapath: whole CTAs, and the two lanes of a CTA (half the
  // stages each, as lane.cuh's LaneAtomOf).
  ok &= runDatapath<pa::Atom<pa::HopperTma>>("HopperTma", pools, loc, gpuArch);
  ok &= runDatapath<TmaSmall>("HopperTma<3,2K>", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::HopperTma, 4>, true>("HopperTma/lanes", pools, loc, gpuArch);
  // The class dispatch into the any-depth range loop (Atom::reduce<Classes>):
  // depth 8 and 2, 3 (not dividing 16: the one-loop form), and 4 per lane
  // (a push CTA's lanes).
  ok &= runDatapath<pa::Atom<pa::Hopper>, false, true>("Hopper/cls", pools, loc, gpuArch);
  ok &= runDatapath<AmpereSmall, false, true>("Ampere<2,1K>/cls", pools, loc, gpuArch);
  ok &= runDatapath<HopperSmall, false, true>("Hopper<3,2K>/cls", pools, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Hopper, 4>, true, true>("Hopper/lanes/cls", pools, loc, gpuArch);
  return ok;
}

/// Atom::reducePair<Classes>, the class loop of the direct and copy-engine
/// programs (detail::reducePairRange: the unrolled loop and its remainder):
/// each CTA a contiguous share of whole vectors, dst0 = op(a, b) and dst1 a
/// copy, or in place into a. Sources: regions 0 and 1.
template <class E, RedOp Op>
__global__ void __launch_bounds__(1024) reducePairKernel(std::byte* dst0, std::byte* dst1, const std::byte* a,
                                                         const std::byte* b, std::size_t nvec) {
  constexpr uint64_t kClasses = purlin::reductionClassesOf(
      1u << int(dtypeOfElem<E>()), (1u << int(RedOp::Sum)) | (1u << int(RedOp::Max)) | (1u << int(RedOp::Min)));
  const std::size_t lo = nvec * blockIdx.x / gridDim.x, hi = nvec * (blockIdx.x + 1) / gridDim.x;
  pa::Atom<pa::Generic>::template reducePair<kClasses>(purlin::reductionOf(dtypeOfElem<E>(), Op), dst0 + lo * 16,
                                                       dst1 != nullptr ? dst1 + lo * 16 : nullptr, a + lo * 16,
                                                       b + lo * 16, (hi - lo) * 16, pa::ctaSlice());
}

template <class E, RedOp Op>
bool runPairOp(Pools& pools) {
  // Around the unrolled loop's step (kReduceUnroll x threads vectors).
  static const std::size_t counts[] = {1, 3, 95, 383, 384, 385, 4096 + 17, 65536 + 3};
  static const int threadsCycle[] = {96, 256, 1024};
  const int srcOff[2] = {kGuard, kGuard};
  bool ok = true;
  int idx = 0;
  for (std::size_t nvec : counts) {
    for (int inPlace = 0; inPlace < 2 && ok; ++inPlace, ++idx) {
      const std::size_t bytes = nvec * 16, span = bytes + 2 * kGuard;
      std::byte* a = pools.dev[0][0] + kGuard;
      std::byte* dst0 = inPlace ? a : pools.dev[0][kRegions - 1] + kGuard;
      std::byte* dst1 = inPlace ? nullptr : pools.dev[0][kRegions - 2] + kGuard;
      const int threads = threadsCycle[idx % 3], grid = 1 + idx % 3;
      // The regions as the host has them (earlier cases wrote their outputs there).
      for (int r : {0, kRegions - 2, kRegions - 1})
        ATOMTEST_CK(cudaMemcpy(pools.dev[0][r], pools.host[r].data(), span, cudaMemcpyDefault));
      reducePairKernel<E, Op><<<grid, threads>>>(dst0, dst1, a, pools.dev[0][1] + kGuard, nvec);
      ATOMTEST_CK(cudaGetLastError());
      ATOMTEST_CK(cudaDeviceSynchronize());
      std::vector<unsigned char> result(bytes);
      for (std::size_t i = 0; i < bytes / sizeof(E); ++i) {
        const E e = hostReduce<E, Op>(pools, 2, srcOff, i);
        std::memcpy(result.data() + i * sizeof(E), &e, sizeof(E));
      }
      for (int d = 0; d < (inPlace ? 1 : 2) && ok; ++d) {
        // the region's bytes around the output unchanged, the result inside
        const int region = inPlace ? 0 : d == 0 ? kRegions - 1 : kRegions - 2;
        std::vector<unsigned char> want(pools.host[region].begin(), pools.host[region].begin() + span), got(span);
        std::memcpy(want.data() + kGuard, result.data(), bytes);
        ATOMTEST_CK(cudaMemcpy(got.data(), pools.dev[0][region], span, cudaMemcpyDefault));
        for (std::size_t k = 0; k < span; ++k)
          if (got[k] != want[k]) {
            std::printf("  reducePair mismatch: nvec=%zu inPlace=%d dst%d threads=%d grid=%d at byte %+ld: got 0x%02x "
                        "want 0x%02x\n",
                        nvec, inPlace, d, threads, grid, static_cast<long>(k) - kGuard, got[k], want[k]);
            ok = false;
            break;
          }
      }
      // restore source 0 (in place) for later cases
      ATOMTEST_CK(cudaMemcpy(pools.dev[0][0], pools.host[0].data(), span, cudaMemcpyDefault));
    }
  }
  std::printf("%s reducePair %-4s %s cases=%d\n", ok ? "PASS" : "FAIL", typeName<E>(), opName(Op), idx);
  return ok;
}

bool runPairs(Pools& pools) {
  bool ok = true;
  ok &= runPairOp<float, RedOp::Sum>(pools);
  ok &= runPairOp<float, RedOp::Max>(pools);
  ok &= runPairOp<__half, RedOp::Sum>(pools);
  ok &= runPairOp<__nv_bfloat16, RedOp::Sum>(pools);
  ok &= runPairOp<__nv_bfloat16, RedOp::Min>(pools);
  return ok;
}

/// The dtype of element type E (purlin/types.def), for the dispatch case.
template <class E> __device__ constexpr int dtypeIndexOf() {
  int t = -1;
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) \
  if (std::is_same_v<E, Element>) t = int(purlin::DType::Name);
#include "purlin/types.def"
  return t;
}

/// withReductionClass's dispatch (a compare tree over Classes): thread t
/// asks for class t - 1 (from -1 to past the last) and records the class of
/// the tag it was called with, -1 when none (a class outside Classes).
template <uint64_t Classes> __global__ void classDispatchKernel(int* got, int count) {
  const int t = int(threadIdx.x);
  if (t >= count) return;
  int cls = -1;
  pa::withReductionClass<Classes>(t - 1, [&](auto tag) {
    using E = typename decltype(tag)::Elem;
    cls = purlin::classIndex(purlin::DType(dtypeIndexOf<E>()), decltype(tag)::family);
  });
  got[t] = cls;
}

template <uint64_t Classes> bool runClassDispatch(const char* name) {
  constexpr int kCount = purlin::kNumReductionClasses + 3;  // -1 .. kNumReductionClasses + 1
  int* dev = nullptr;
  ATOMTEST_CK(cudaMalloc(&dev, kCount * sizeof(int)));
  classDispatchKernel<Classes><<<1, 64>>>(dev, kCount);
  int got[kCount];
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaMemcpy(got, dev, sizeof got, cudaMemcpyDeviceToHost));
  ATOMTEST_CK(cudaFree(dev));
  bool ok = true;
  for (int t = 0; t < kCount; ++t) {
    const int c = t - 1;
    const bool in = c >= 0 && c < purlin::kNumReductionClasses && (Classes >> c & 1u);
    const int want = in ? c : -1;
    if (got[t] != want) {
      std::printf("FAIL withReductionClass %s: class %d dispatched to %d, expected %d\n", name, c, got[t], want);
      ok = false;
    }
  }
  std::printf("%s withReductionClass %s\n", ok ? "PASS" : "FAIL", name);
  return ok;
}

bool runClassDispatches() {
  using purlin::DType;
  using purlin::OpFamily;
  using purlin::classBit;
  bool ok = runClassDispatch<purlin::kAllReductionClasses>("every class");
  ok &= runClassDispatch<classBit(DType::F32, OpFamily::Sum) | classBit(DType::F8E5M2, OpFamily::Extremum) |
                         classBit(DType::I32, OpFamily::Product)>("three classes");
  ok &= runClassDispatch<classBit(DType::BF16, OpFamily::Sum)>("one class");
  ok &= runClassDispatch<purlin::reductionClassesOf(0x3u, 0x1fu)>("f32 and f16, every op");
  return ok;
}

/// Fills every region with random values that are valid in all three types
/// (the same bytes are reinterpreted per type; f16/bf16 see pairs of halves).
bool fillPools(Pools& pools, int ngpu) {
  Rng rng(7);
  for (int r = 0; r < kRegions; ++r) {
    auto& h = pools.host[r];
    h.resize(kCap);
    for (std::size_t i = 0; i + 4 <= kCap; i += 4) {
      // a float in [-4, 4] whose upper half is also a reasonable bf16 and
      // whose halves are finite fp16 values: build from two fp16 values
      __half a = __float2half_rn(rng.uniform(-4.f, 4.f)), b = __float2half_rn(rng.uniform(-4.f, 4.f));
      std::memcpy(h.data() + i, &a, 2);
      std::memcpy(h.data() + i + 2, &b, 2);
    }
    for (int g = 0; g < ngpu; ++g) {
      ATOMTEST_CK(cudaSetDevice(g));
      ATOMTEST_CK(cudaMalloc(&pools.dev[g][r], kCap));
      ATOMTEST_CK(cudaMemcpy(pools.dev[g][r], h.data(), kCap, cudaMemcpyHostToDevice));
    }
  }
  ATOMTEST_CK(cudaSetDevice(0));
  return true;
}

} // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--small") == 0) {
      gSmallOnly = true;
    } else {
      std::fprintf(stderr, "atom_reduce_test: unknown argument '%s' (usage: atom_reduce_test [--small])\n", argv[i]);
      return 2;
    }
  }
  const int ngpu = setupDevices();
  if (ngpu == 0) return 1;
  const int gpuArch = deviceArch(0);
  Pools pools;
  if (!fillPools(pools, ngpu)) { std::printf("FAIL allocation\n"); return 1; }
  bool ok = runAll(pools, {"local", false, 0}, gpuArch);
  ok &= runPairs(pools);
  ok &= runClassDispatches();
  if (ngpu >= 2) {
    ok &= runAll(pools, {"mixed", true, 0}, gpuArch);
    ok &= runAll(pools, {"push", true, 1}, gpuArch);
  } else {
    std::printf("SKIP reduce peer cases: fewer than 2 GPUs with peer access\n");
  }
  for (int g = 0; g < ngpu; ++g) {
    cudaSetDevice(g);
    for (auto* p : pools.dev[g]) cudaFree(p);
  }
  std::printf("%s atom_reduce_test\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
