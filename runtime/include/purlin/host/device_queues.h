/// @file device_queues.h
/// @brief The hardware work queues of a device, which ranks sharing a GPU
/// must not share (docs/runtime.md "Ranks sharing a GPU").
///
/// CUDA feeds a device through CUDA_DEVICE_MAX_CONNECTIONS work queues per
/// process (8 unless set, at most 32) and maps streams onto them in turn as
/// they are created, so with more streams than queues two streams share
/// one. Work in one queue starts in order: a kernel that waits for the one
/// before it on its own stream (a rank's program after its call check, or
/// its next call) holds back everything queued behind it. When two ranks
/// that share a GPU have their streams in one queue, a rank's kernel that
/// spins on a peer's can sit in front of that peer's kernel: a hang, or a
/// checked-mode timeout (the explanation offered for issue 35 item 10, not
/// yet confirmed on a GPU: tests/gpu/queue_alias_test.cu). The runtime
/// library therefore sets CUDA_DEVICE_MAX_CONNECTIONS to 32 when it is
/// loaded, where the process has not set it, before CUDA starts; and a
/// communicator is refused when a process that holds several of its ranks
/// on one GPU has fewer queues than two per such rank (its stream and its
/// side stream). That makes a shared queue unlikely, not impossible: a
/// process that creates more streams than queues can still get one.
#pragma once

namespace purlin {

/// What the runtime library sets when the process has not (CUDA's most).
inline constexpr int kDeviceQueuesSet = 32;

/// Set by the Python package to its process id when CUDA had started in
/// that process before CUDA_DEVICE_MAX_CONNECTIONS was set: deviceQueues()
/// is then CUDA's default (8) in that process, not in its children.
inline constexpr const char *kCudaStartedPidVariable = "PURLIN_CUDA_STARTED_PID";

/// The device work queues of this process: CUDA_DEVICE_MAX_CONNECTIONS as
/// it was when the runtime library was loaded (at most 32; 8 where CUDA
/// cannot read it), or kDeviceQueuesSet where it was unset or empty (the
/// library set it then). Where CUDA had started before the
/// library was loaded, that setting came too late and CUDA uses its own
/// default (8): load the library (or `import purlin`) before any CUDA call,
/// or set the variable yourself.
int deviceQueues();

} // namespace purlin
