/// @file kernel_modules.h
/// @brief The device-code modules whose kernels a communicator loads at
/// creation (docs/runtime.md "Kernel loading").
///
/// Under CUDA's lazy loading (the default since CUDA 12.2) a kernel is loaded
/// on its first launch, and loading may wait for the whole context to go
/// idle. A Purlin kernel spins until its peers' kernels of the same call run,
/// so ranks that share a process would deadlock: one rank's first launch of a
/// kernel waits for the context (and holds the loader), its earlier kernel
/// waits for a peer, and the peer's launch waits for the loader. The
/// communicator therefore loads every kernel of every module that holds Purlin
/// kernels when it is created, before any of its calls, as NCCL loads its
/// kernels at initialization.
#pragma once

namespace purlin {

/// Returns the CUfunction (as void *) of a kernel of one module, resolved
/// through the CUDA runtime its translation unit is linked with (a library
/// loaded apart, such as purlin.jit's, has a runtime of its own); null if
/// that runtime cannot resolve it. It initializes that runtime on the
/// current device.
using KernelModuleResolver = void *(*)() noexcept;

/// Records the module `resolve` names (purlin/snac/module_anchor.cuh passes
/// one per translation unit); returns true. Runs during static
/// initialization, so it never throws.
bool registerKernelModule(KernelModuleResolver resolve) noexcept;

/// Loads every kernel of every registered module on `device` (the current
/// device), once per process, device and module: a later call loads only
/// the modules registered since (a library loaded after the communicators
/// were created: purlin_preload_kernels); a no-op under eager loading. A
/// module whose runtime cannot resolve it on this device (no code for its
/// architecture) is skipped: the launch reports it. Throws purlin::Error
/// (CudaError) when the driver fails to load a kernel.
void preloadKernelModules(int device);

} // namespace purlin
