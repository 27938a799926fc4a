/// @file check.h
/// @brief Correctness checks run before each (collective, size) is timed:
/// deterministic bf16 inputs per rank, comparison of Purlin's output with
/// NCCL's (bitwise for copies, within a tolerance for reductions), and an
/// order-independent checksum to compare outputs across ranks.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace purlin::bench {

/// Fills `elems` bf16 values: multiples of 1/64 in [-1, 1], a hash of
/// (rank, index, seed), so every rank and every size gets different data.
void fillInput(void *buf, std::size_t elems, int rank, uint32_t seed, cudaStream_t stream);

/// Number of elements i < elems where `got[i]` differs from `want[i]`:
/// bitwise when `tolerance` is false, otherwise as bf16 values with
/// |got - want| > 1e-2 * |want| + 1e-2 (NaN never matches). Synchronizes `stream`.
std::size_t countMismatches(const void *got, const void *want, std::size_t elems,
                            bool tolerance, cudaStream_t stream);

/// Order-independent 64-bit checksum of `elems` bf16 values (position
/// weighted), equal on two ranks iff (with high probability) the buffers are
/// bitwise equal. Synchronizes `stream`.
uint64_t checksum(const void *buf, std::size_t elems, cudaStream_t stream);

/// Stream-ordered and capturable form of checksum: zeroes *slot (device
/// memory), then adds the checksum of `elems` values into it.
void checksumInto(const void *buf, std::size_t elems, unsigned long long *slot, cudaStream_t stream);

/// The collectives referenceOutput knows.
enum class RefColl { AllGather, ReduceScatter, AllReduce, AllToAll };

/// Writes into `out` what rank `rank` of `n` must receive from collective
/// `c` with `count` elements per block when every rank p's input was
/// fillInput(.., p, seed, ..): copies exactly; sums in fp32 in ascending
/// rank order, rounded once to bf16 (exact: the inputs are multiples of
/// 1/64 of magnitude <= 1, so any order gives this bitwise). Stream-ordered.
void referenceOutput(RefColl c, int n, int rank, std::size_t count, uint32_t seed, void *out, cudaStream_t stream);

} // namespace purlin::bench
