/// @file bounded_sync.h
/// @brief Destruction's wait for this rank's kernels, bounded
/// (docs/failure-model.md "Destruction"): the device's synchronization,
/// with the communicator's abort flag raised if it has not returned in
/// time. No CUDA here (the caller passes the synchronization), so that the
/// CPU unit tests run the mechanism (runtime/tests/bounded_sync_test.cpp).
#pragma once

#include <cstdint>

#include "purlin/host/communicator.h"

namespace purlin::detail {

/// How long destruction waits for this rank's kernels before it aborts
/// them: PURLIN_DESTROY_TIMEOUT_MS when set (0: without bound), else 10 s,
/// or in checked mode the wait timeout plus 1 s when that is longer (its
/// waits give up by themselves first).
long destroyWaitMs(const CommOptions& options);

/// Calls `synchronize(arg)` (communicator.cpp: cudaDeviceSynchronize on
/// the rank's device); if it has not returned after `boundMs` (> 0),
/// raises `*abortFlag` (the flag abort() raises: every wait of this rank's
/// kernels then gives up within ~1024 polls, so the synchronization ends
/// even when a peer died or never made a call this rank is in) and says so
/// on stderr. Without a flag or a bound, or when no thread can be started,
/// it waits without bound. True when the flag was raised. Never throws.
bool synchronizeBounded(void (*synchronize)(void*), void* arg, volatile uint32_t* abortFlag, long boundMs,
                        int rank) noexcept;

} // namespace purlin::detail
