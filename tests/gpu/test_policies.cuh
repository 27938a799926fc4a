/// @file test_policies.cuh
/// @brief The policies the collective GPU tests launch with (PAuto, PTput)
/// and the datapath, apart from the rest of the harness so that the one
/// translation unit that compiles the device programs for them
/// (coll_programs.cu) needs nothing else.
#pragma once

#include <cstddef>

#include "purlin/snac/collective.cuh"

namespace colltest {

using namespace purlin;
namespace sn = purlin::snac;

/// The generated programs' datapath (their kernels exist for it only).
using Datapath = atom::Native;

/// The H200 policy under test: latency program up to 512 KiB messages.
/// The world table is per thread (each in-process rank has its own) and
/// mutable, so setTransfer() runs the same cases under pull and push.
struct PAuto {
  static constexpr int pipelineStages = 8, stageBytes = 16384;
  static constexpr std::size_t stagingBytes = std::size_t(256) << 20;
#define COLLTEST_WN {256u << 10, 16, 512, 8, 16, 8, 512, 1u << 20, false}
  static inline thread_local sn::WorldConsts world[kMaxRanks + 1] = {
      {}, {}, {512u << 10, 16, 512, 8, 16, 8, 512, 2u << 20, false},
      COLLTEST_WN, COLLTEST_WN, COLLTEST_WN, COLLTEST_WN, COLLTEST_WN, COLLTEST_WN};
};
/// The same knobs with the latency program off: small counts exercise the
/// throughput program.
struct PTput {
  static constexpr int pipelineStages = 8, stageBytes = 16384;
  static constexpr std::size_t stagingBytes = std::size_t(256) << 20;
#define COLLTEST_WT {0, 16, 512, 8, 16, 8, 512, 2u << 20, false}
  static inline thread_local sn::WorldConsts world[kMaxRanks + 1] = {
      {}, {}, COLLTEST_WT, COLLTEST_WT, COLLTEST_WT, COLLTEST_WT, COLLTEST_WT, COLLTEST_WT, COLLTEST_WT};
};
/// Selects the throughput transfer of PAuto and PTput for this thread, and
/// the push transfer's lanes per stage CTA and per consume/gather CTA (0 =
/// the runtime's default); every rank must select the same.
inline void setTransfer(bool push, int lanes = 0, int consumeLanes = 0) {
  for (int n = 0; n <= kMaxRanks; ++n) {
    PAuto::world[n].push = PTput::world[n].push = push;
    PAuto::world[n].lanes = PTput::world[n].lanes = lanes;
    PAuto::world[n].consumeLanes = PTput::world[n].consumeLanes = consumeLanes;
  }
}

} // namespace colltest
