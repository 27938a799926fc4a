/// @file Defaults.cpp
/// @brief Built-in codesign policies for sm_80 (A100), sm_90 (H100/H200) and
/// sm_100 (B200). The latency/throughput crossover shrinks as the world
/// grows (a latency packet program moves n-1 copies of every byte).
#include "PolicyLoader.h"

namespace purlin {

std::optional<Arch> parseArch(std::string_view name) {
  if (name == "sm_80")
    return Arch::Sm80;
  if (name == "sm_90")
    return Arch::Sm90;
  if (name == "sm_100")
    return Arch::Sm100;
  return std::nullopt;
}

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

/// Numbers of one architecture: crossover, latency CTAs (the most the
/// runtime's size-dependent launch shape uses) and chunk size for world 2,
/// 3-4 and 5-8; the rest is the same for every world size.
struct ArchDefaults {
  uint64_t maxBytes[3];
  uint64_t chunkBytes[3];
  int latencyCtas[3], latencyThreads;
  int stageCtas, consumeCtas, gatherCtas, threads;
  int stages, stageBytes;
  uint64_t stagingBytes;
  Transfer transfer[3];  ///< throughput program's transfer for world 2, 3-4, 5-8
};

/// The direct program's knobs, the same for every architecture and world
/// size (the runtime's defaults, runtime/include/purlin/snac/plan.h
/// kDirectMinBytes/kDirectCtas/kDirectThreads; measured on 2xH200,
/// bench/NOTES.md E9). Nothing measured elsewhere argues for other numbers.
constexpr DirectPolicy kDirect = {true, 4 * MiB, 32, 512};

// sm_90 (H200, NV18): the paper's Table 3 region. World 2 measured
// (bench/NOTES.md E5): the latency program with up to 128 CTAs beats the
// throughput program up to 4 MiB for all four collectives.
constexpr ArchDefaults kSm90 = {{4 * MiB, 256 * KiB, 128 * KiB}, {4 * MiB, 1 * MiB, 512 * KiB},
                                {128, 32, 32}, 512, 8, 16, 8, 512, 8, 16384, 256 * MiB,
                                {Transfer::Push, Transfer::Pull, Transfer::Pull}};
// sm_90 throughput (bench/NOTES.md E6-E7, 2xH200): world 2 push, 8 stage /
// 16 consume / 8 gather CTAs (<= 32 for AllReduce), chunks scaled with the
// message up to 4 MiB (runtime: ~4 chunks per worker, 2 workers per CTA).
// Push is a per-collective preference: the SNAC IR derives push for
// AG/RS/AR/A2A only and binds pull for the others. Worlds 3-8 stay pull;
// unmeasured (no 4- or 8-GPU machine here).
// sm_80 (A100, NV12): lower bandwidth, smaller chunks and a shallower pipeline.
constexpr ArchDefaults kSm80 = {{256 * KiB, 128 * KiB, 64 * KiB}, {512 * KiB, 512 * KiB, 256 * KiB},
                                {8, 8, 8}, 512, 8, 16, 8, 512, 4, 16384, 128 * MiB,
                                {Transfer::Pull, Transfer::Pull, Transfer::Pull}};
// sm_100 (B200, NVLink 5): twice the link bandwidth, a deeper pipeline
// (12 x 16 KiB = 192 KiB: within the 227 KiB a CTA may use, purlin/limits.h;
// the earlier 8 x 32 KiB = 256 KiB failed the Atom's static_assert).
// Unmeasured: no B200 here.
constexpr ArchDefaults kSm100 = {{1 * MiB, 512 * KiB, 256 * KiB}, {2 * MiB, 1 * MiB, 1 * MiB},
                                 {24, 24, 24}, 512, 8, 24, 8, 512, 12, 16384, 512 * MiB,
                                 {Transfer::Pull, Transfer::Pull, Transfer::Pull}};

const ArchDefaults &numbersFor(Arch a) {
  switch (a) {
  case Arch::Sm80: return kSm80;
  case Arch::Sm100: return kSm100;
  case Arch::Sm90: break;
  }
  return kSm90;
}

} // namespace

PolicySet defaultPolicies(Arch arch) {
  const ArchDefaults &d = numbersFor(arch);
  Policy p;
  p.name = "Policy";
  p.stagingBytes = d.stagingBytes;
  p.atom = {d.stages, d.stageBytes};
  for (int n = kMinWorld; n <= kMaxWorld; ++n) {
    int band = n == 2 ? 0 : n <= 4 ? 1 : 2;
    WorldPolicy &w = p.world[n];
    w.latency = {d.maxBytes[band], d.latencyCtas[band], d.latencyThreads};
    w.throughput = {d.stageCtas, d.consumeCtas, d.gatherCtas, d.threads, d.chunkBytes[band], d.transfer[band]};
    w.direct = kDirect;
  }
  PolicySet set;
  set.arch = arch;
  set.policies.emplace(p.name, p);
  return set;
}

} // namespace purlin
