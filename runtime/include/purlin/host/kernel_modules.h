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

/// Records the module of `anchor` (the host stub of a kernel compiled into a
/// translation unit; purlin/snac/module_anchor.cuh passes one per unit);
/// returns true. Runs during static initialization, so it never throws.
bool registerKernelModule(const void *anchor) noexcept;

/// Loads every kernel of every registered module on `device` (the current
/// device), once per process and device; a no-op for modules loaded before
/// and under eager loading. Throws purlin::Error (CudaError) when the driver
/// fails to load one.
void preloadKernelModules(int device);

} // namespace purlin
