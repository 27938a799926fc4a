/// @file EmitDeviceEntry.cpp
/// @brief printDeviceEntry (see EmitDeviceEntry.h).
#include "codegen/EmitDeviceEntry.h"

#include <sstream>

#include "codegen/EmitInstances.h"
#include "codegen/Spelling.h"

namespace purlin::codegen {

std::string printDeviceEntry(const std::string &id, bool reduces) {
  std::ostringstream o;
  o << "/// Device API (docs/device-api.md): this collective run by the caller's kernel, which\n"
    << "/// " << id << "_launchDevice launched with `call` as its first parameter, in place of the\n"
    << "/// kernel of the program the call's plan takes: the latency program (Plan::latency; the\n"
    << "/// latency plan's grid and block, no dynamic shared memory), else the throughput program\n"
    << "/// (its grid, block and AtomT::kWorkspaceBytes of dynamic shared memory, which this entry\n"
    << "/// uses as its workspace). Every thread of every CTA calls it once, before the kernel\n"
    << "/// reads anything earlier work on the stream writes or writes anything it reads (it\n"
    << "/// waits for that work first).\n"
    << "/// True in every thread when the call succeeded on this rank; with GridSync::After (the\n"
    << "/// default; the throughput program and one rank always) every CTA has then finished the\n"
    << "/// program, so the whole output is written and any CTA may read any of it.\n";
  if (reduces)
    o << "/// Pair: kAnyPair (every pair of the instantiation table), or the one pair the caller's\n"
      << "/// kernel is for (" << id << "_launchDevice<Pair> refuses calls of another).\n";
  else
    o << "/// Pair: kAnyPair (a copy: no reduction).\n";
  o << "template <int Pair = kAnyPair>\n"
    << "__device__ __forceinline__ bool " << id
    << "_device(const snac::DeviceCall& call, snac::GridSync sync = snac::GridSync::After) {\n";
  if (reduces)
    o << "  static_assert((kernelClasses<Pair>(~uint64_t(0)) & " << reductionsName(id) << ") != 0,\n"
      << "                \"" << id << "_device<Pair>: a pair outside the instantiation table\");\n";
  o << "  if (call.pl.n == 1) return snac::deviceLocalCall(call);  // a copy of this rank's block\n"
    << "  if (call.pl.latency) {\n"
    << "    const uint64_t e = " << id << "_latencyCta<packet::WordForm::Either"
    << (reduces ? ", packet::RankForm::Any, Pair" : "") << ">(call.dc, call.pl, call.in, call.out);\n"
    << "    return snac::deviceCallEnd(call.dc, e, sync);\n"
    << "  }\n"
    << "  // The throughput program: its roles write the output from every part of the grid, so\n"
    << "  // every CTA waits at the grid barrier whatever `sync` asks.\n"
    << "  using AtomT = atom::AtomFor<" << atomTypeName(id) << ", Pair>;\n"
    << "  if constexpr (!atom::kAtomCompiled<AtomT>) {\n"
    << "    __trap();  // this pass's architecture is older than the datapath needs\n"
    << "    return false;\n"
    << "  } else {\n"
    << "    extern __shared__ __align__(128) std::byte atomWorkspace[];\n"
    << "    const uint64_t e = " << id << "_throughputCta<AtomT>(call.dc, call.pl, call.in, call.out, atomWorkspace);\n"
    << "    return snac::deviceCallEnd(call.dc, e, snac::GridSync::After);\n"
    << "  }\n"
    << "}\n";
  return o.str();
}

} // namespace purlin::codegen
