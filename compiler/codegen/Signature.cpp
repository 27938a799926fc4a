/// @file Signature.cpp
/// @brief Host API parameter lists and buffer-size documentation per kind
/// (sizes as in docs/snac-protocol.md, "Ranks, partitions, counts").
#include "codegen/Signature.h"

namespace purlin::codegen {

std::vector<SizeArgs> apiForms(CollectiveKind k) {
  const SizeArgs own = sizeArgs(k);
  if (snac::def::deviceForm(own) == own) return {own};
  return {own, snac::def::deviceForm(own)};
}

std::string formSuffix(SizeArgs sizes) { return snac::def::isDeviceForm(sizes) ? "Device" : ""; }

std::vector<Param> hostParams(CollectiveKind k) { return hostParams(k, sizeArgs(k)); }
std::vector<std::string> hostDoc(CollectiveKind k) { return hostDoc(k, sizeArgs(k)); }

std::vector<Param> hostParams(CollectiveKind k, SizeArgs sizes) {
  std::vector<Param> ps;
  ps.push_back({"const void *", "const void *", "in", ""});
  ps.push_back({"void *", "void *", "out", ""});
  switch (sizes) {
  case SizeArgs::Count:
    ps.push_back({"std::size_t ", "size_t ", "count", ""});
    break;
  case SizeArgs::Counts:
  case SizeArgs::DeviceCounts:  // the device form's in device memory, n entries; then the bound
    ps.push_back({"const std::size_t *", "const size_t *", "counts", ""});
    if (sizes == SizeArgs::DeviceCounts) ps.push_back({"std::size_t ", "size_t ", "maxCount", ""});
    break;
  case SizeArgs::SendRecvCounts:  // MPI's alltoallv, and the bound that picks the program
  case SizeArgs::DeviceSendRecvCounts:  // the same arrays in device memory
    for (const char *name : {"sendCounts", "sendDispls", "recvCounts", "recvDispls"})
      ps.push_back({"const std::size_t *", "const size_t *", name, ""});
    ps.push_back({"std::size_t ", "size_t ", "maxCount", ""});
    break;
  }
  ps.push_back({"DType ", "purlin_dtype_t ", "dtype", "static_cast<purlin::DType>(dtype)"});
  // The reduction op only where something is reduced.
  if (reduces(k)) ps.push_back({"RedOp ", "purlin_redop_t ", "op", "static_cast<purlin::RedOp>(op)"});
  if (isRooted(k)) ps.push_back({"int ", "int ", "root", ""});
  ps.push_back({"cudaStream_t ", "cudaStream_t ", "stream", ""});
  return ps;
}

std::vector<std::string> hostDoc(CollectiveKind k, SizeArgs sizes) {
  std::vector<std::string> d;
  if (snac::def::isDeviceForm(sizes)) {
    d = {"The form of " + std::string(toString(k)) + " whose counts are in device memory (docs/device-counts.md):",
         "the kernels read them when the call runs (a CUDA graph replays with the counts of each replay)."};
    if (sizes == SizeArgs::DeviceCounts)
      d.insert(d.end(), {"counts[n] (device memory): elements of each rank's block, the same on every rank;",
                         "displacements are prefix sums. maxCount: at least every count, the same on every rank;",
                         "it picks the program. The scattered side holds n*maxCount elements, the packed side maxCount."});
    else
      d.insert(d.end(), {"sendCounts, sendDispls, recvCounts, recvDispls (device memory, n entries each) as in allToAllV;",
                         "maxCount: at least every count of every rank, the same on every rank; it picks the program.",
                         "in and out hold n*maxCount elements; every block lies inside them."});
    d.push_back("Counts past maxCount, blocks past those capacities, or two ranks' counts that disagree: every rank's");
    d.push_back("call moves nothing and the communicator fails on every rank (asyncError names the entry).");
    d.push_back("No in-place form; not the direct program. Each call runs a counts kernel first (two round trips).");
  }
  if (!snac::def::isDeviceForm(sizes)) switch (k) {
  case CollectiveKind::AllGather:
    d = {"in:  count elements (this rank's contribution).",
         "out: n*count elements; rank p's contribution lands at p*count.",
         "In place when in == out + rank*count (element units)."};
    break;
  case CollectiveKind::ReduceScatter:
    d = {"in:  n*count elements; partition p (at p*count) is reduced onto rank p.",
         "out: count elements: the reduction of every rank's partition `rank`.",
         "In place when out == in + rank*count (element units)."};
    break;
  case CollectiveKind::AllReduce:
    d = {"in:  count elements; out: count elements, the elementwise reduction over ranks.",
         "in == out (in place) is allowed."};
    break;
  case CollectiveKind::AllToAll:
    d = {"in:  n*count elements; partition p (at p*count) goes to rank p.",
         "out: n*count elements; the partition from rank p lands at p*count."};
    break;
  case CollectiveKind::AllGatherV:
    d = {"counts[n]: elements contributed by each rank; displacements are prefix sums.",
         "in:  counts[rank] elements; out: sum(counts) elements in rank order."};
    break;
  case CollectiveKind::ReduceScatterV:
    d = {"counts[n]: elements of each rank's partition; displacements are prefix sums.",
         "in:  sum(counts) elements; out: counts[rank] elements."};
    break;
  case CollectiveKind::AllToAllV:
    d = {"sendCounts[p]: elements this rank sends to rank p, from in + sendDispls[p];",
         "recvCounts[p]: elements it receives from rank p, at out + recvDispls[p] (element units;",
         "the received blocks must not overlap; sendCounts[rank] == recvCounts[rank]).",
         "maxCount: at least every sendCounts entry of every rank, the same on every rank",
         "(it picks the program, e.g. the per-expert capacity); n*maxCount*E is the message size."};
    break;
  case CollectiveKind::Broadcast:
    d = {"count elements; `in` of rank `root` lands in `out` of every rank."};
    break;
  case CollectiveKind::Reduce:
    d = {"count elements; the reduction over ranks lands in `out` of rank `root`."};
    break;
  case CollectiveKind::Scatter:
    d = {"in (root only): n*count elements; out: count elements, partition `rank`."};
    break;
  case CollectiveKind::Gather:
    d = {"in: count elements; out (root only): n*count elements in rank order."};
    break;
  case CollectiveKind::Unknown:
    break;
  }
  if (reduces(k))
    d.push_back("dtype: F32, F16 or BF16 (fp32 accumulation in ascending rank order); op: Sum, Max or Min.");
  else
    d.push_back("dtype gives the element size (the bytes are copied as they are).");
  d.push_back("The call is collective: every rank calls it with equal sizes and dtype,");
  d.push_back("on one stream per communicator; it enqueues work and returns (stream-ordered).");
  return d;
}

} // namespace purlin::codegen
