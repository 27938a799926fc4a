/// @file stream_memops.h
/// @brief Stream memory operations (the driver's cuStreamWriteValue32,
/// resolved at first use through the CUDA runtime, so nothing links
/// libcuda). The copy-engine form of the direct ReduceScatter / AllReduce
/// (docs/snac-protocol.md "Direct program") announces each copied chunk to
/// the peer with one: captured into a graph it becomes a memory-operation
/// node on the copy branch, without a kernel launch.
#pragma once

#include <cstdint>
#include <string>

#include <cuda_runtime_api.h>

namespace purlin {

/// Whether the operation was found (CUDA 12+ drivers have it on every
/// platform). The launcher still agrees on it over all ranks (registerDirect).
bool streamMemOpsAvailable();

/// Enqueues on `stream`: write the 32-bit `value` at device address `addr`
/// (local, or a peer's memory mapped here) after everything earlier on the
/// stream, with the default memory barrier (writes ordered before it on the
/// stream, copy-engine writes included, are visible before the value).
/// Returns "" or an error message.
std::string streamWriteValue32(cudaStream_t stream, void *addr, uint32_t value);

} // namespace purlin
