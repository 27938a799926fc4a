/// @file graph.cuh
/// @brief Host primitives of the direct program's copy-engine form
/// (docs/snac-protocol.md "Direct program"; the form itself is printed by
/// purlinc from the SNAC IR: NAME_engine in the generated .cu). While a call
/// is captured, each primitive adds one node or edge to the call's graph on
/// one of two streams: GraphStream::Stream, the call's stream, and
/// GraphStream::Branch, the communicator's side stream (forked from and
/// joined back into the call's stream within the capture). A wait on an
/// event orders after the latest record of that event enqueued before it
/// (CUDA's semantics; the IR's EDGE pairing).
///
/// The first failure is kept (the op id that caused it and CUDA's message);
/// every later primitive is then a no-op, so a printed sequence of calls
/// needs no error handling between them. Nothing here throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "purlin/device_comm.h"
#include "purlin/host/stream_memops.h"
#include "purlin/snac/plan.h"

namespace purlin::snac {

/// The two streams of a copy-engine call (the IR's Stream).
enum class GraphStream { Stream = 0, Branch = 1 };

/// The kernel nodes the printer emits (arrive, reduce, finish): chunk c of
/// `done` bytes before it and `chunk` bytes (0, 0, 0 outside a chunk loop).
using EngineKernel = void (*)(DeviceComm, Plan, const std::byte*, std::byte*, int, std::size_t, std::size_t);

class EngineGraph {
public:
  /// `chunks` events for per-chunk edges (Communicator::captureChunkEvent).
  EngineGraph(cudaStream_t stream, cudaStream_t branch, cudaEvent_t fork, cudaEvent_t join, const cudaEvent_t *chunks,
              int chunkEvents)
      : fork_(fork), join_(join), chunks_(chunks), chunkEvents_(chunkEvents) {
    streams_[0] = stream;
    streams_[1] = branch;
  }

  bool ok() const { return error_.empty(); }
  /// "" or "<op>: <what>: <CUDA's message>" of the first failure.
  const std::string &error() const { return error_; }
  /// Status::CudaError for a failed CUDA call, Status::Internal for a refusal.
  Status status() const { return ok() ? Status::Ok : status_; }
  /// Refuses the call (a precondition of the printed form does not hold).
  void refuse(const char *op, const std::string &why) {
    if (ok()) error_ = std::string(op) + ": " + why, status_ = Status::Internal;
  }

  cudaEvent_t fork() const { return fork_; }
  cudaEvent_t join() const { return join_; }
  /// Chunk event c; a failure (and nullptr) when c has none.
  cudaEvent_t chunk(int c, const char *op) {
    if (c >= 0 && c < chunkEvents_) return chunks_[c];
    fail(op, "chunk event", "chunk " + std::to_string(c) + " has no capture event (the communicator has " +
                                std::to_string(chunkEvents_) + ")");
    return nullptr;
  }

  /// A copy-engine transfer of `bytes` bytes (none for 0 bytes or dst == src).
  void copy(GraphStream s, void *dst, const void *src, std::size_t bytes, const char *op) {
    if (!ok() || bytes == 0 || dst == src) return;
    check(op, "cudaMemcpyAsync", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, on(s)));
  }
  /// A stream memory operation writing 1 into the flag at `addr` (a peer's
  /// signal), after everything earlier on the stream.
  void writeFlag(GraphStream s, uint64_t *addr, const char *op) {
    if (!ok()) return;
    if (std::string e = streamWriteValue32(on(s), addr, 1); !e.empty()) fail(op, "stream memory operation", e);
  }
  void record(GraphStream s, cudaEvent_t ev, const char *op) {
    if (ok() && ev) check(op, "cudaEventRecord", cudaEventRecord(ev, on(s)));
  }
  void wait(GraphStream s, cudaEvent_t ev, const char *op) {
    if (ok() && ev) check(op, "cudaStreamWaitEvent", cudaStreamWaitEvent(on(s), ev, 0));
  }
  /// A kernel node: grid x block threads, no dynamic shared memory.
  void launch(GraphStream s, EngineKernel kernel, int grid, int block, const char *op, const DeviceComm &dc,
              const Plan &pl, const std::byte *in, std::byte *out, int c, std::size_t done, std::size_t chunk) {
    if (!ok()) return;
    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(unsigned(grid));
    cfg.blockDim = dim3(unsigned(block));
    cfg.stream = on(s);
    check(op, "kernel launch", cudaLaunchKernelEx(&cfg, kernel, dc, pl, in, out, c, done, chunk));
  }

private:
  cudaStream_t streams_[2];
  cudaEvent_t fork_, join_;
  const cudaEvent_t *chunks_;
  int chunkEvents_;
  std::string error_;
  Status status_ = Status::Ok;

  cudaStream_t on(GraphStream s) const { return streams_[int(s)]; }
  void fail(const char *op, const char *what, const std::string &why) {
    if (ok()) error_ = std::string(op) + ": " + what + ": " + why, status_ = Status::CudaError;
  }
  void check(const char *op, const char *what, cudaError_t err) {
    if (err == cudaSuccess) return;
    (void)cudaGetLastError();
    fail(op, what, cudaGetErrorString(err));
  }
};

} // namespace purlin::snac
