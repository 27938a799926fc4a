/* @file purlin.h
 * @brief C ABI of the Purlin runtime: communicators as opaque handles,
 * status codes, a thread-local last-error message. Nothing here throws. */
#ifndef PURLIN_PURLIN_H
#define PURLIN_PURLIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Status codes; equal to purlin::Status (runtime/include/purlin/types.h). */
typedef enum purlin_status_t {
  PURLIN_OK = 0,
  PURLIN_INVALID_ARGUMENT = 1,
  PURLIN_UNSUPPORTED = 2,
  PURLIN_CUDA_ERROR = 3,
  PURLIN_BOOTSTRAP_ERROR = 4,
  PURLIN_TIMEOUT = 5,
  PURLIN_INTERNAL = 6,
  PURLIN_ABORTED = 7,      /**< purlin_comm_abort on this rank or a peer */
  PURLIN_REMOTE_ERROR = 8  /**< a peer failed (its wait timed out, or its call differed) */
} purlin_status_t;

/** Element types of collectives (purlin/types.def: PURLIN_FLOAT32,
 *  PURLIN_FLOAT16, PURLIN_BFLOAT16, ...); equal to purlin::DType. (Used by
 *  the C functions purlinc generates, e.g. purlin_allReduce.) */
typedef enum purlin_dtype_t {
#define PURLIN_DTYPE(Name, name, bytes, CNAME, Element) PURLIN_##CNAME,
#include "purlin/types.def"
  PURLIN_NUM_DTYPES
} purlin_dtype_t;

/** Reduction operators (purlin/types.def: PURLIN_SUM, PURLIN_MAX,
 *  PURLIN_MIN, PURLIN_AVG, PURLIN_PRODUCT); equal to purlin::RedOp. Every
 *  dtype takes every op, in ascending rank order, rounded once: floats
 *  accumulate in fp32 (f64 in fp64), integers wrap around, avg is the sum
 *  divided by the number of ranks (integers: truncated toward zero). */
typedef enum purlin_redop_t {
#define PURLIN_REDOP(Name, name, CNAME) PURLIN_##CNAME,
#include "purlin/types.def"
  PURLIN_NUM_REDOPS
} purlin_redop_t;

/** Opaque communicator handle (one rank's membership). */
typedef struct purlin_comm *purlin_comm_t;

/** Creation options; a NULL pointer means the defaults of
 *  purlin_comm_options_default(). */
typedef struct purlin_comm_options_t {
  size_t staging_half_bytes; /**< bytes of one staging half (default 256 MiB) */
  size_t packet_half_bytes;  /**< bytes of one packet half (default 16 MiB) */
  int checked;               /**< non-zero: bound every spin-wait by time, check every call across ranks */
  uint64_t wait_timeout_us;  /**< checked mode: microseconds before a wait gives up (default 10 s) */
  int direct;                /**< non-zero (default): captured and registered calls may take the direct program */
} purlin_comm_options_t;

/** The default options. */
purlin_comm_options_t purlin_comm_options_default(void);

/** Collective: creates this rank's communicator on `device` using the
 *  environment set by purlin-launch (PURLIN_RANK, PURLIN_WORLD_SIZE,
 *  PURLIN_BOOTSTRAP). A negative `device` means PURLIN_DEVICE (or, if unset,
 *  rank modulo the number of visible devices). */
purlin_status_t purlin_comm_create_from_env(int device,
                                            const purlin_comm_options_t *options,
                                            purlin_comm_t *comm);

/** Collective: creates this rank's communicator over a Unix-domain socket
 *  rendezvous at `path` (rank 0 listens; a leading '@' = abstract socket;
 *  a filesystem path only in a private directory). Every rank needs the
 *  job's secret in PURLIN_BOOTSTRAP_COOKIE (32 hex digits, the same on every
 *  rank; PURLIN_INVALID_ARGUMENT without it when size > 1): rank 0 and each
 *  rank prove it to each other by challenge and response (it is never
 *  sent), and rank 0 drops connections of other users or without the proof.
 *  Use a random path (a predictable one can be taken first), or
 *  purlin_get_unique_id, which draws both. */
purlin_status_t purlin_comm_create_unix(const char *path, int rank, int size,
                                        int device,
                                        const purlin_comm_options_t *options,
                                        purlin_comm_t *comm);

/** Bytes of purlin_unique_id_t. */
#define PURLIN_UNIQUE_ID_BYTES 128

/** A rendezvous id, like ncclUniqueId: one rank draws it with
 *  purlin_get_unique_id and every rank receives the bytes out of band
 *  (e.g. broadcast over torch.distributed), then calls
 *  purlin_comm_create_by_id. It names a random abstract Unix socket and
 *  carries a random secret of the job, so only processes of this user
 *  that were given it can join. */
typedef struct purlin_unique_id_t {
  char internal[PURLIN_UNIQUE_ID_BYTES];
} purlin_unique_id_t;

/** Draws a fresh unique id (from the kernel's random source). Local. */
purlin_status_t purlin_get_unique_id(purlin_unique_id_t *id);

/** Collective over `size` processes (or threads) passing the same id:
 *  creates rank `rank`'s communicator on `device` (>= 0). Rank 0 listens
 *  for the others for up to 60 s. A world of one needs no peer. */
purlin_status_t purlin_comm_create_by_id(const purlin_unique_id_t *id, int rank, int size, int device,
                                         const purlin_comm_options_t *options, purlin_comm_t *comm);

/** Opaque in-process rendezvous: ranks are threads of this process. */
typedef struct purlin_group *purlin_group_t;

/** Creates a group of `size` ranks (1..8). Local. */
purlin_status_t purlin_group_create(int size, purlin_group_t *group);

/** Frees the group; the communicators created in it stay valid. */
purlin_status_t purlin_group_destroy(purlin_group_t group);

/** Collective over the group's threads: each calls it at once with its
 *  rank (each rank once) and its device (ranks may share a device). */
purlin_status_t purlin_comm_create_in_group(purlin_group_t group, int rank, int device,
                                            const purlin_comm_options_t *options, purlin_comm_t *comm);

/** Frees the communicator (NULL is allowed). Local, not collective.
 *  purlin_comm_abort and purlin_comm_async_error racing it, or called on
 *  the handle later, are safe: they return PURLIN_INVALID_ARGUMENT
 *  ("destroyed"), since the handle's few bytes stay allocated; any other
 *  call on a destroyed handle is a bug of the caller. */
purlin_status_t purlin_comm_destroy(purlin_comm_t comm);

/** Rank and world size; -1 for a NULL handle. */
int purlin_comm_rank(purlin_comm_t comm);
int purlin_comm_size(purlin_comm_t comm);
/** The CUDA device of the communicator; -1 for a NULL handle. */
int purlin_comm_device(purlin_comm_t comm);

/** The communicator's failure so far, without any CUDA call and without
 *  waiting (purlin::Communicator::asyncError, like ncclCommGetAsyncError):
 *  PURLIN_OK while no wait of this rank's kernels gave up; otherwise
 *  PURLIN_TIMEOUT, PURLIN_ABORTED, PURLIN_REMOTE_ERROR or
 *  PURLIN_INVALID_ARGUMENT (a peer's call differed), with the reason in
 *  purlin_last_error(). A failed communicator stays failed: every later
 *  collective on it returns the same status; destroy it. */
purlin_status_t purlin_comm_async_error(purlin_comm_t comm);

/** The same as purlin_comm_async_error (kept for callers of the first ABI). */
purlin_status_t purlin_comm_check(purlin_comm_t comm);

/** Aborts the communicator on this rank (purlin::Communicator::abort, like
 *  ncclCommAbort): every wait of this rank's kernels gives up within about
 *  a millisecond and tells the peers, whose waits give up too; later
 *  collectives are refused with PURLIN_ABORTED. No CUDA call: returns at
 *  once; safe from any thread (e.g. a watchdog) while another thread uses
 *  the communicator. purlin_comm_destroy afterwards does not hang on this
 *  rank's kernels. */
purlin_status_t purlin_comm_abort(purlin_comm_t comm);

/** Refuses a call on this rank for a reason of its own, made before reaching
 *  the collective (a binding's own checks: a tensor on another device, not
 *  contiguous, of the wrong size), so that the peers, which may be making
 *  the call, are not left waiting and no later call pairs across it
 *  (purlin::Communicator::refuseCall; docs/runtime.md "A refusal on one
 *  rank"): the communicator fails on every rank, in stream order on
 *  `stream` (a cudaStream_t; NULL: the legacy default stream). `status` is
 *  what this rank's later calls return (not PURLIN_OK), `why` the reason
 *  (may be NULL). Returns `status`, with purlin_last_error() set. The
 *  collectives call it themselves for their own refusals of this kind. */
purlin_status_t purlin_comm_refuse_call(purlin_comm_t comm, void *stream, purlin_status_t status, const char *why);

/** Collective, like ncclCommRegister (purlin::Communicator::registerBuffer):
 *  every rank registers its own buffer of `bytes` bytes (the same on every
 *  rank, in the same order), inside one cudaMalloc allocation. Eager calls
 *  whose output lies in it then take the direct program where the policy
 *  wants it, when every rank passes its output at the same offset. Sets
 *  *handle (the same on every rank). The buffer stays allocated until
 *  purlin_comm_deregister has returned on every rank. */
purlin_status_t purlin_comm_register(purlin_comm_t comm, void *ptr, size_t bytes, uint64_t *handle);

/** Collective: drops registration `handle` on every rank (after
 *  synchronizing this rank's device); afterwards each rank may free its
 *  buffer. PURLIN_INVALID_ARGUMENT on every rank if a rank does not hold
 *  it or the ranks pass different handles. */
purlin_status_t purlin_comm_deregister(purlin_comm_t comm, uint64_t handle);

/** Collective (purlin::Communicator::releaseDirect): closes the peer output
 *  mappings that captured calls made; call after destroying the graphs
 *  that captured direct calls and before freeing their output buffers. */
purlin_status_t purlin_comm_release_direct(purlin_comm_t comm);

/** Loads, on CUDA device `device` (-1: the calling thread's current
 *  device), the kernels of every library of Purlin collectives loaded in
 *  this process that are not loaded there yet. Communicator creation does
 *  this for the libraries loaded before it; a library loaded later (a
 *  purlin.jit build) calls it before its first collective call, so that
 *  ranks sharing a process never load a kernel while a peer's kernel waits
 *  (docs/runtime.md "Kernel loading"). A no-op under eager loading. */
purlin_status_t purlin_preload_kernels(int device);

/** The message of the last failed call on this thread ("" if none). */
const char *purlin_last_error(void);

/** The name of a status code, e.g. "CudaError". */
const char *purlin_status_string(purlin_status_t status);

/** The library's version, e.g. "0.1.0". */
const char *purlin_version(void);

/** The name ("f32", "bf16", ...) and element bytes of dtype value `dtype`;
 *  NULL and 0 for a value past the last (so a binding can list them). */
const char *purlin_dtype_name(int dtype);
size_t purlin_dtype_size(int dtype);

/** The name ("sum", "max", ...) of reduction op value `op`; NULL past the last. */
const char *purlin_redop_name(int op);

/** One collective of this library (purlin/collectives.def): its C function
 *  and the arguments it takes after (comm, in, out):
 *    sizes 0: size_t count;
 *    sizes 1: const size_t *counts (one per rank);
 *    sizes 2: const size_t *sendCounts, *sendDispls, *recvCounts,
 *             *recvDispls, then size_t maxCount;
 *    sizes 3: const size_t *counts in device memory (n entries), then
 *             size_t maxCount (a V collective's "Device" form,
 *             docs/device-counts.md);
 *    sizes 4: the four arrays of sizes 2 in device memory, then size_t
 *             maxCount (AllToAllV's "Device" form);
 *  then purlin_dtype_t dtype, purlin_redop_t op if `reduces`, int root if
 *  `rooted`, and cudaStream_t stream. */
typedef struct {
  const char *function; /* e.g. "purlin_allReduce" */
  int sizes;
  int reduces;
  int rooted;
} purlin_collective_t;
/** The collective at `index` (0, 1, ...); NULL past the last (so a binding
 *  can list them and build each function's signature). */
const purlin_collective_t *purlin_collective(int index);

#ifdef __cplusplus
} /* extern "C" */

namespace purlin {
class Communicator;
}
/** The C++ communicator behind a handle (NULL for NULL), for generated C
 *  wrappers that launch kernels with its DeviceComm. */
purlin::Communicator *purlin_comm_unwrap(purlin_comm_t comm);

/** Runs `body` (a callable), converting any exception into a status code and
 *  the thread-local last-error message. For generated C wrappers. */
namespace purlin::capi {
purlin_status_t fail(purlin_status_t status, const char *message);
purlin_status_t fromCurrentException();
template <class F> purlin_status_t guard(F &&body) noexcept {
  try {
    body();
    return PURLIN_OK;
  } catch (...) {
    return fromCurrentException();
  }
}
} // namespace purlin::capi
#endif

#endif /* PURLIN_PURLIN_H */
