/// @file vmm_share.h
/// @brief cuMem (virtual memory management) buffers of one process mapped
/// into a peer process: what torch's expandable segments and symmetric
/// memory allocate, which legacy CUDA IPC cannot export. Internal to
/// runtime/src (direct_registry.cpp).
///
/// The exporter walks the mapped chunks that cover a range (each a
/// cuMemCreate allocation mapped on its own, e.g. one 20 MiB page of an
/// expandable segment), exports each as a POSIX file descriptor and keeps
/// the descriptors open while its peers import them; a peer takes each
/// descriptor with pidfd_getfd (same user; Yama's ptrace scope may forbid
/// it), imports it, and maps the chunks at the same offsets into one
/// reserved range with read-write access for its device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace purlin::detail {

/// The most chunks one exported range may span (64 pages of an expandable
/// segment's large pool: 1.25 GiB).
constexpr int kMaxVmmChunks = 64;

struct VmmChunk {
  int32_t fd = -1;       ///< the exporter's descriptor of the chunk's allocation
  int32_t padding = 0;
  uint64_t offset = 0;   ///< from the first chunk's base
  uint64_t bytes = 0;    ///< the chunk's mapped size
};

/// An exported range: plain data, sent to the peers as it is.
struct VmmExport {
  int32_t chunks = 0;
  int32_t padding = 0;
  uint64_t base = 0;     ///< the first chunk's base in the exporter's process
  uint64_t span = 0;     ///< from base to the end of the last chunk
  VmmChunk chunk[kMaxVmmChunks];
};

/// Describes and exports [ptr, ptr+bytes) when it lies in cuMem chunks of
/// `device` that were created exportable as POSIX file descriptors; false
/// (nothing left open, *why says what did not qualify) otherwise.
bool exportVmm(const void *ptr, std::size_t bytes, int device, VmmExport &out, std::string *why);

/// Closes the exporter's descriptors (after every peer imported them).
void closeVmmExport(VmmExport &e);

/// Maps the export of process `pid` into this process for `device`;
/// returns the base of the range (the exporter's `base` as seen here), or
/// nullptr with *why (nothing left mapped or reserved).
void *importVmm(int32_t pid, const VmmExport &e, int device, std::string *why);

/// Unmaps and frees a range importVmm returned; false if a call failed.
bool unmapVmm(void *base, std::size_t span);

} // namespace purlin::detail
