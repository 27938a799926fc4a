/// @file module_anchor.cuh
/// @brief Registers the device-code module of each translation unit that
/// launches Purlin programs (instantiates snac::launch) or compiles their
/// kernels (purlinc's kernel units name PurlinModuleRegistration<void>),
/// so that communicator creation loads all of the unit's kernels
/// (purlin/host/kernel_modules.h).
#pragma once

#include "purlin/host/kernel_modules.h"

// The global unnamed namespace: nvcc's kernel stubs cannot name a kernel in
// an unnamed namespace nested in a named one when the unit also has the
// global one (the printed collectives do), hence the prefixed names.
namespace {

/// Does nothing: its host stub names this unit's module (internal linkage,
/// so every unit has its own).
__global__ void purlinModuleAnchorKernel() {}

/// The anchor's function, resolved by the CUDA runtime this unit is linked
/// with: a library built apart from libpurlin.so (purlin.jit's) carries a
/// CUDA runtime of its own, which alone knows its kernels' host stubs.
void *purlinModuleAnchorFunction() noexcept {
  cudaFunction_t f = nullptr;
  return cudaGetFuncBySymbol(&f, reinterpret_cast<const void *>(&purlinModuleAnchorKernel)) == cudaSuccess
             ? static_cast<void *>(f)
             : nullptr;
}

/// Its initializer runs during static initialization of every unit that
/// names PurlinModuleRegistration<C>::registered (snac::launch does, for
/// each collective C it launches: the name must depend on the template's
/// parameter, or a unit that only includes snac::launch would register).
template <class Collective>
struct PurlinModuleRegistration {
  static inline const bool registered =
      purlin::registerKernelModule(&purlinModuleAnchorFunction);
};

} // namespace
