/// @file stream_memops.h
/// @brief Stream memory operations (the driver's cuStreamWriteValue32 /
/// cuStreamWaitValue32, resolved at first use through the CUDA runtime, so
/// nothing links libcuda). The copy-engine form of the direct ReduceScatter /
/// AllReduce (docs/snac-protocol.md "Direct program") orders its copies
/// against kernels with them: captured into a graph they become memory-
/// operation nodes, which run on the copy branch without a kernel launch.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace purlin {

/// Whether both operations were found (CUDA 12+ drivers have them on every
/// platform). The same answer for every process on one machine.
bool streamMemOpsAvailable();

/// Enqueues on `stream`: write the 32-bit `value` at device address `addr`
/// (local, or a peer's memory mapped here) after everything earlier on the
/// stream, with the default memory barrier (writes ordered before it on the
/// stream, copy-engine writes included, are visible before the value).
/// Returns "" or an error message.
std::string streamWriteValue32(cudaStream_t stream, void *addr, uint32_t value);

/// Enqueues on `stream`: nothing later on the stream starts until the 32-bit
/// word at device address `addr` is >= `value` (unsigned). Returns "" or an
/// error message.
std::string streamWaitValue32Geq(cudaStream_t stream, const void *addr, uint32_t value);

} // namespace purlin
