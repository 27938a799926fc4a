/// @file atom_copy_test.cu
/// @brief Atom::copy against a host reference for every datapath: odd sizes,
/// source/destination offsets 0..15 bytes, 1 to 3 CTAs and warp slices,
/// local and peer (pull from and push to GPU 1). Bytes around the
/// destination must stay untouched. Prints a PASS/FAIL/SKIP line per case;
/// exits non-zero on any failure.
#include <cstring>

#include "atom_test_common.cuh"

namespace pa = purlin::atom;
using namespace atomtest;

namespace {

constexpr int kGuard = 64;        // bytes checked on each side of dst
constexpr unsigned char kFill = 0xCD;

/// How a CTA's threads share its part: one Atom call by the whole CTA, one
/// per warp (warpSlice) or one per half (the two lanes of lane.cuh).
enum Split : int { kCta = 0, kWarps = 1, kLanes = 2 };

/// Each CTA copies its share [lo, hi) of the range (split points at
/// arbitrary bytes); split by kSplit into sub-shares, each with its own
/// workspace of A::kWorkspaceBytes.
template <class A, int kSplit>
__global__ void __launch_bounds__(1024) copyKernel(std::byte* dst, const std::byte* src, std::size_t bytes) {
  extern __shared__ __align__(16) std::byte ws[];
  if constexpr (pa::kAtomCompiled<A>) {
    const std::size_t lo = bytes * blockIdx.x / gridDim.x, hi = bytes * (blockIdx.x + 1) / gridDim.x;
    if constexpr (kSplit != kCta) {
      const unsigned per = kSplit == kWarps ? 32u : blockDim.x / 2, w = threadIdx.x / per, nw = blockDim.x / per;
      const std::size_t a = lo + (hi - lo) * w / nw, b = lo + (hi - lo) * (w + 1) / nw;
      A::copy(dst + a, src + a, b - a, ws + w * A::kWorkspaceBytes, pa::Slice{threadIdx.x % per, per});
    } else {
      A::copy(dst + lo, src + lo, hi - lo, ws);
    }
  } else {
    __trap();
  }
}

struct Buffers {
  std::byte* src = nullptr;  // on srcDev
  std::byte* dst = nullptr;  // on dstDev
  std::vector<unsigned char> hostSrc;
};

struct Locality {
  const char* name;
  int srcDev, dstDev;
};

/// Runs one case; prints nothing on success, the first mismatch otherwise.
template <class A, int kSplit>
bool runOne(const Buffers& b, const Locality& loc, std::size_t bytes, int soff, int doff, int threads, int grid,
            std::vector<unsigned char>& back) {
  const std::size_t smem = A::kWorkspaceBytes * (kSplit == kWarps ? threads / 32 : kSplit == kLanes ? 2 : 1);
  auto k = copyKernel<A, kSplit>;
  if (!allowSmem(k, smem)) {
    std::printf("  cannot set %zu bytes of shared memory\n", smem);
    return false;
  }
  ATOMTEST_CK(cudaSetDevice(loc.dstDev));
  ATOMTEST_CK(cudaMemset(b.dst, kFill, bytes + 2 * kGuard + 16));
  ATOMTEST_CK(cudaDeviceSynchronize());
  ATOMTEST_CK(cudaSetDevice(0));
  k<<<grid, threads, smem>>>(b.dst + kGuard + doff, b.src + soff, bytes);
  ATOMTEST_CK(cudaGetLastError());
  ATOMTEST_CK(cudaDeviceSynchronize());
  const std::size_t total = bytes + 2 * kGuard + 16;
  back.resize(total);
  ATOMTEST_CK(cudaMemcpy(back.data(), b.dst, total, cudaMemcpyDefault));
  for (std::size_t i = 0; i < total; ++i) {
    const bool inside = i >= static_cast<std::size_t>(kGuard + doff) && i < kGuard + doff + bytes;
    const unsigned char want = inside ? b.hostSrc[soff + (i - kGuard - doff)] : kFill;
    if (back[i] != want) {
      std::printf("  mismatch: bytes=%zu soff=%d doff=%d threads=%d grid=%d at dst%+ld: got 0x%02x want 0x%02x\n",
                  bytes, soff, doff, threads, grid, static_cast<long>(i) - kGuard - doff, back[i], want);
      return false;
    }
  }
  return true;
}

/// All sizes and offsets of one datapath at one locality; one line per size.
template <class A, int kSplit>
bool runDatapath(const char* name, const Buffers& b, const Locality& loc, int gpuArch) {
  static const std::size_t sizes[] = {0, 1, 15, 16, 17, 4095, 4096, 65536 + 5, (1u << 20) + 3, (3u << 20) + 11};
  static const int threadsCycle[] = {256, 96, 1024, 512};
  if (gpuArch < A::kMinArch) {
    std::printf("SKIP copy %-14s %-5s: needs sm_%d, device is sm_%d\n", name, loc.name, A::kMinArch / 10,
                gpuArch / 10);
    return true;
  }
  bool allOk = true;
  std::vector<unsigned char> back;
  for (std::size_t size : sizes) {
    std::vector<std::pair<int, int>> offs;
    if (size <= 65536 + 5) {
      for (int s = 0; s < 16; ++s) offs.insert(offs.end(), {{s, 0}, {s, s}, {s, (s + 5) % 16}});
    } else {
      offs = {{0, 0}, {3, 3}, {0, 8}, {4, 0}, {1, 2}, {15, 15}};
    }
    bool ok = true;
    int idx = 0;
    for (auto [so, dof] : offs) {
      int threads = threadsCycle[idx % 4];
      if (kSplit != kCta && threads < 64) threads = 64;
      const int grid = size > 65536 ? 1 + idx % 3 : 1 + idx % 2;
      ++idx;
      if (!runOne<A, kSplit>(b, loc, size, so, dof, threads, grid, back)) { ok = false; break; }
    }
    std::printf("%s copy %-14s %-5s bytes=%-8zu offsets=%zu\n", ok ? "PASS" : "FAIL", name, loc.name, size,
                offs.size());
    allOk &= ok;
  }
  return allOk;
}

bool runAll(const Buffers& b, const Locality& loc, int gpuArch) {
  bool ok = true;
  ok &= runDatapath<pa::Atom<pa::Generic>, kCta>("Generic", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Ampere>, kCta>("Ampere", b, loc, gpuArch);
  ok &= runDatapath<AmpereSmall, kCta>("Ampere<2,1K>", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Hopper>, kCta>("Hopper", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Native>, kCta>("Native", b, loc, gpuArch);
  ok &= runDatapath<HopperSmall, kCta>("Hopper<3,2K>", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Blackwell>, kCta>("Blackwell", b, loc, gpuArch);
  ok &= runDatapath<CandL2, kCta>("cand-L2hint", b, loc, gpuArch);
  ok &= runDatapath<CandCs, kCta>("cand-st.cs", b, loc, gpuArch);
  ok &= runDatapath<CandNa, kCta>("cand-st.na", b, loc, gpuArch);
  ok &= runDatapath<CandPf, kCta>("cand-bulkpf", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::Generic>, kWarps>("Generic/warp", b, loc, gpuArch);
  ok &= runDatapath<AmpereSmall, kWarps>("Ampere<2,1K>/w", b, loc, gpuArch);
  // The TMA datapath: whole CTAs, the two lanes of a CTA (half the stages
  // each, as lane.cuh's LaneAtomOf), and warp slices (the register path).
  ok &= runDatapath<pa::Atom<pa::HopperTma>, kCta>("HopperTma", b, loc, gpuArch);
  ok &= runDatapath<TmaSmall, kCta>("HopperTma<3,2K>", b, loc, gpuArch);
  ok &= runDatapath<pa::Atom<pa::HopperTma, 4>, kLanes>("HopperTma/lanes", b, loc, gpuArch);
  ok &= runDatapath<TmaSmall, kWarps>("HopperTma<3,2K>/w", b, loc, gpuArch);
  return ok;
}

} // namespace

int main() {
  const int ngpu = setupDevices();
  if (ngpu == 0) return 1;
  const int gpuArch = deviceArch(0);
  const std::size_t cap = (4u << 20) + 4 * kGuard;
  Buffers local, pull, push;
  std::vector<unsigned char> host(cap);
  Rng rng(42);
  for (auto& c : host) c = static_cast<unsigned char>(rng.next() >> 56);
  std::byte *s0 = nullptr, *d0 = nullptr, *s1 = nullptr, *d1 = nullptr;
  bool ok = true;
  auto alloc = [&](int dev, std::byte** p) {
    return cudaSetDevice(dev) == cudaSuccess && cudaMalloc(p, cap) == cudaSuccess &&
           cudaMemcpy(*p, host.data(), cap, cudaMemcpyHostToDevice) == cudaSuccess;
  };
  if (!alloc(0, &s0) || !alloc(0, &d0)) { std::printf("FAIL allocation on GPU 0\n"); return 1; }
  local = {s0, d0, host};
  ok &= runAll(local, {"local", 0, 0}, gpuArch);
  if (ngpu >= 2) {
    if (!alloc(1, &s1) || !alloc(1, &d1)) { std::printf("FAIL allocation on GPU 1\n"); return 1; }
    pull = {s1, d0, host};
    push = {s0, d1, host};
    ok &= runAll(pull, {"pull", 1, 0}, gpuArch);
    ok &= runAll(push, {"push", 0, 1}, gpuArch);
  } else {
    std::printf("SKIP copy peer cases: fewer than 2 GPUs with peer access\n");
  }
  cudaSetDevice(0);
  cudaFree(s0); cudaFree(d0);
  if (s1) { cudaSetDevice(1); cudaFree(s1); cudaFree(d1); }
  std::printf("%s atom_copy_test\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
