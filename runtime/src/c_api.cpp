/// @file c_api.cpp
/// @brief The C ABI of purlin.h: handles own a bootstrap and a Communicator;
/// every entry point converts exceptions into a status and a thread-local
/// message and never throws.
#include "purlin/last_error.h"
#include "purlin/purlin.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "purlin/host/bootstrap.h"
#include "purlin/host/communicator.h"
#include "purlin/host/kernel_modules.h"
#include "purlin/snac/kinds.h"

#include "driver_entry.h"

/// A communicator handle. purlin_comm_abort and purlin_comm_async_error
/// may run on any thread at any time, also while or after another thread
/// destroys the communicator: they take `guard`, and destroy empties the
/// handle under it and leaves the handle itself allocated (a tombstone of
/// a few dozen bytes), so a late abort finds "destroyed" instead of freed
/// memory, or another communicator at the same address.
struct purlin_comm {
  std::mutex guard;
  bool destroyed = false;  ///< under guard
  std::unique_ptr<purlin::Bootstrap> bootstrap;
  std::unique_ptr<purlin::Communicator> comm;
};

/// An in-process rendezvous (purlin_group_create): ranks are threads.
struct purlin_group {
  explicit purlin_group(int size) : group(size) {}
  purlin::InProcessGroup group;
};

namespace {


static_assert(PURLIN_OK == int(purlin::Status::Ok) &&
                  PURLIN_INVALID_ARGUMENT == int(purlin::Status::InvalidArgument) &&
                  PURLIN_UNSUPPORTED == int(purlin::Status::Unsupported) &&
                  PURLIN_CUDA_ERROR == int(purlin::Status::CudaError) &&
                  PURLIN_BOOTSTRAP_ERROR == int(purlin::Status::BootstrapError) &&
                  PURLIN_TIMEOUT == int(purlin::Status::Timeout) &&
                  PURLIN_INTERNAL == int(purlin::Status::Internal) &&
                  PURLIN_ABORTED == int(purlin::Status::Aborted) &&
                  PURLIN_REMOTE_ERROR == int(purlin::Status::RemoteError),
              "purlin_status_t must equal purlin::Status");
static_assert(PURLIN_NUM_DTYPES == purlin::kNumDTypes && PURLIN_NUM_REDOPS == purlin::kNumRedOps &&
                  PURLIN_BFLOAT16 == int(purlin::DType::BF16) && PURLIN_MIN == int(purlin::RedOp::Min),
              "purlin_dtype_t / purlin_redop_t must equal purlin::DType / RedOp (both from purlin/types.def)");

purlin::CommOptions toOptions(const purlin_comm_options_t *o) {
  purlin::CommOptions opt;
  if (o) {
    opt.stagingHalfBytes = o->staging_half_bytes;
    opt.packetHalfBytes = o->packet_half_bytes;
    opt.checked = o->checked != 0;
    opt.waitTimeoutUs = o->wait_timeout_us;
    opt.direct = o->direct != 0;
  }
  return opt;
}

/// Shared tail of the create functions.
purlin_status_t create(std::unique_ptr<purlin::Bootstrap> (*makeBootstrap)(const void *),
                       const void *arg, int device,
                       const purlin_comm_options_t *options, purlin_comm_t *out) {
  if (!out)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create: null output handle");
  *out = nullptr;
  return purlin::capi::guard([&] {
    auto handle = std::make_unique<purlin_comm>();
    handle->bootstrap = makeBootstrap(arg);
    int dev = device;
    if (dev < 0) {
      const char *env = std::getenv("PURLIN_DEVICE");
      if (env && *env) {
        char *end = nullptr;
        long v = std::strtol(env, &end, 10);
        if (*end != '\0' || v < 0 || v > 1024)
          throw purlin::Error(purlin::Status::InvalidArgument,
                              std::string("PURLIN_DEVICE='") + env + "' is not a device index");
        dev = static_cast<int>(v);
      } else {
        int count = 0;
        purlin::checkCuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount", __FILE__, __LINE__);
        dev = handle->bootstrap->rank() % (count > 0 ? count : 1);
      }
    }
    handle->comm = std::make_unique<purlin::Communicator>(*handle->bootstrap, dev,
                                                          toOptions(options));
    *out = handle.release();
  });
}

struct UnixArgs {
  const char *path;
  int rank, size;
  const char *cookie;
};

struct GroupArgs {
  purlin_group *group;
  int rank;
};

/// purlin_unique_id_t's text: "purlin-id-1 <socket name> <cookie>", NUL-padded.
constexpr const char *kUniqueIdTag = "purlin-id-1";

/// Parses a unique id into its socket name and cookie; false if malformed.
bool parseUniqueId(const purlin_unique_id_t &id, std::string &path, std::string &cookie) {
  const std::size_t len = ::strnlen(id.internal, PURLIN_UNIQUE_ID_BYTES);
  if (len == PURLIN_UNIQUE_ID_BYTES) return false;  // no terminator
  const std::string text(id.internal, len);
  const std::string tag = std::string(kUniqueIdTag) + " ";
  if (text.compare(0, tag.size(), tag) != 0) return false;
  const std::size_t space = text.find(' ', tag.size());
  if (space == std::string::npos || space == tag.size()) return false;
  path = text.substr(tag.size(), space - tag.size());
  cookie = text.substr(space + 1);
  return path[0] == '@' && cookie.size() == 32 &&
         cookie.find_first_not_of("0123456789abcdef") == std::string::npos;
}

} // namespace

namespace purlin::capi {

purlin_status_t fail(purlin_status_t status, const char *message) {
  // One message for C and C++ callers (purlin/last_error.h).
  purlin::setLastError(message ? message : "");
  return status;
}

purlin_status_t fromCurrentException() {
  try {
    throw;
  } catch (const purlin::Error &e) {
    return fail(static_cast<purlin_status_t>(e.status()), e.what());
  } catch (const std::bad_alloc &) {
    return fail(PURLIN_INTERNAL, "out of host memory");
  } catch (const std::exception &e) {
    return fail(PURLIN_INTERNAL, e.what());
  } catch (...) {
    return fail(PURLIN_INTERNAL, "unknown exception");
  }
}

} // namespace purlin::capi

extern "C" {

purlin_comm_options_t purlin_comm_options_default(void) {
  purlin::CommOptions d;
  return {d.stagingHalfBytes, d.packetHalfBytes, d.checked ? 1 : 0, d.waitTimeoutUs, d.direct ? 1 : 0};
}

purlin_status_t purlin_comm_create_from_env(int device,
                                            const purlin_comm_options_t *options,
                                            purlin_comm_t *comm) {
  return create([](const void *) { return purlin::bootstrapFromEnv(); }, nullptr,
                device, options, comm);
}

purlin_status_t purlin_comm_create_unix(const char *path, int rank, int size,
                                        int device,
                                        const purlin_comm_options_t *options,
                                        purlin_comm_t *comm) {
  if (!path)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create_unix: null path");
  const char *cookie = std::getenv("PURLIN_BOOTSTRAP_COOKIE");
  UnixArgs args{path, rank, size, cookie ? cookie : ""};
  return create(
      [](const void *a) -> std::unique_ptr<purlin::Bootstrap> {
        auto *u = static_cast<const UnixArgs *>(a);
        return std::make_unique<purlin::UnixSocketBootstrap>(u->path, u->rank, u->size, purlin::bootstrapTimeoutMs(), u->cookie);
      },
      &args, device, options, comm);
}

purlin_status_t purlin_get_unique_id(purlin_unique_id_t *id) {
  if (!id)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_get_unique_id: null output");
  return purlin::capi::guard([&] {
    std::memset(id->internal, 0, sizeof id->internal);
    // An abstract socket (nothing on the filesystem) with a random name,
    // and the job's secret, both from the kernel's random source.
    const std::string text = std::string(kUniqueIdTag) + " @purlin-" + purlin::randomHex(12) + " " +
                             purlin::randomHex(16);
    static_assert(PURLIN_UNIQUE_ID_BYTES > 80, "the id text fits");
    std::memcpy(id->internal, text.data(), text.size());
  });
}

purlin_status_t purlin_comm_create_by_id(const purlin_unique_id_t *id, int rank, int size, int device,
                                         const purlin_comm_options_t *options, purlin_comm_t *comm) {
  if (comm) *comm = nullptr;
  if (!id)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create_by_id: null id");
  if (device < 0)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create_by_id: a negative device");
  std::string path, cookie;
  if (!parseUniqueId(*id, path, cookie))
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT,
                              "purlin_comm_create_by_id: the id is not one purlin_get_unique_id made (damaged in "
                              "transit? every rank must pass rank 0's id unchanged)");
  UnixArgs args{path.c_str(), rank, size, cookie.c_str()};
  return create(
      [](const void *a) -> std::unique_ptr<purlin::Bootstrap> {
        auto *u = static_cast<const UnixArgs *>(a);
        return std::make_unique<purlin::UnixSocketBootstrap>(u->path, u->rank, u->size, purlin::bootstrapTimeoutMs(), u->cookie);
      },
      &args, device, options, comm);
}

purlin_status_t purlin_group_create(int size, purlin_group_t *group) {
  if (!group)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_group_create: null output");
  *group = nullptr;
  if (size < 1 || size > purlin::kMaxRanks)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, ("purlin_group_create: size " + std::to_string(size) +
                                                        " is outside [1, " + std::to_string(purlin::kMaxRanks) + "]")
                                                           .c_str());
  return purlin::capi::guard([&] { *group = new purlin_group(size); });
}

purlin_status_t purlin_group_destroy(purlin_group_t group) {
  return purlin::capi::guard([&] { delete group; });
}

purlin_status_t purlin_comm_create_in_group(purlin_group_t group, int rank, int device,
                                            const purlin_comm_options_t *options, purlin_comm_t *comm) {
  if (comm) *comm = nullptr;
  if (!group)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create_in_group: null group");
  if (device < 0)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_create_in_group: a negative device");
  GroupArgs args{group, rank};
  return create(
      [](const void *a) -> std::unique_ptr<purlin::Bootstrap> {
        auto *g = static_cast<const GroupArgs *>(a);
        return g->group->group.bootstrap(g->rank);
      },
      &args, device, options, comm);
}

purlin_status_t purlin_comm_destroy(purlin_comm_t comm) {
  if (!comm)
    return PURLIN_OK;
  std::unique_ptr<purlin::Communicator> c;
  std::unique_ptr<purlin::Bootstrap> b;
  {
    std::lock_guard<std::mutex> lock(comm->guard);
    if (comm->destroyed)
      return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_destroy: the communicator was destroyed already");
    comm->destroyed = true;
    c = std::move(comm->comm);
    b = std::move(comm->bootstrap);
  }
  // Outside the guard: destruction synchronizes the device, and an abort
  // from another thread meanwhile returns at once ("destroyed").
  return purlin::capi::guard([&] {
    c.reset();
    b.reset();
  });
}

int purlin_comm_rank(purlin_comm_t comm) { return comm ? comm->comm->rank() : -1; }
int purlin_comm_size(purlin_comm_t comm) { return comm ? comm->comm->size() : -1; }
int purlin_comm_device(purlin_comm_t comm) { return comm ? comm->comm->device() : -1; }

purlin_status_t purlin_comm_async_error(purlin_comm_t comm) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_async_error: null handle");
  std::lock_guard<std::mutex> lock(comm->guard);
  if (comm->destroyed)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_async_error: the communicator was destroyed");
  return purlin::capi::guard([&] { comm->comm->checkDeviceErrors(); });
}

purlin_status_t purlin_comm_check(purlin_comm_t comm) { return purlin_comm_async_error(comm); }

purlin_status_t purlin_comm_abort(purlin_comm_t comm) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_abort: null handle");
  std::lock_guard<std::mutex> lock(comm->guard);
  if (comm->destroyed)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_abort: the communicator was destroyed");
  comm->comm->abort();
  return PURLIN_OK;
}

purlin_status_t purlin_comm_refuse_call(purlin_comm_t comm, void *stream, purlin_status_t status, const char *why) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_refuse_call: null handle");
  if (status == PURLIN_OK || int(status) < 0 || int(status) > int(PURLIN_REMOTE_ERROR))
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, ("purlin_comm_refuse_call: status " +
                                                        std::to_string(int(status)) + " is not an error status")
                                                           .c_str());
  std::lock_guard<std::mutex> lock(comm->guard);
  if (comm->destroyed)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_refuse_call: the communicator was destroyed");
  const std::string reason = why ? why : "refused by the caller";
  comm->comm->refuseCall(purlin::Status(status), reason, stream);
  return purlin::capi::fail(
      status, (reason + "; a refusal of this rank's own arguments fails the communicator on every rank").c_str());
}

purlin_status_t purlin_comm_register(purlin_comm_t comm, void *ptr, size_t bytes, uint64_t *handle) {
  if (!comm || !handle)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_register: null handle");
  *handle = 0;
  return purlin::capi::guard([&] { *handle = comm->comm->registerBuffer(ptr, bytes); });
}

purlin_status_t purlin_comm_deregister(purlin_comm_t comm, uint64_t handle) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_deregister: null handle");
  return purlin::capi::guard([&] { comm->comm->deregisterBuffer(handle); });
}

purlin_status_t purlin_comm_release_direct(purlin_comm_t comm) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_release_direct: null handle");
  return purlin::capi::guard([&] { comm->comm->releaseDirect(); });
}

purlin_status_t purlin_preload_kernels(int device) {
  if (device < -1)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT,
                              "purlin_preload_kernels: a device number, or -1 for the current device, is expected");
  return purlin::capi::guard([&] {
    if (device == -1) {
      int current = 0;
      PURLIN_CUDA_CHECK(cudaGetDevice(&current));
      purlin::preloadKernelModules(current);
      return;
    }
    // The caller's context (none, or one of its own) is restored exactly:
    // cudaSetDevice back to a device number would make a primary context
    // current where there was none.
    using GetCurrent = CUresult (*)(CUcontext *);
    using SetCurrent = CUresult (*)(CUcontext);
    static const auto getCurrent = purlin::detail::driverEntryPoint<GetCurrent>("cuCtxGetCurrent");
    static const auto setCurrent = purlin::detail::driverEntryPoint<SetCurrent>("cuCtxSetCurrent");
    if (!getCurrent || !setCurrent)
      PURLIN_THROW(purlin::Status::CudaError, "purlin_preload_kernels: the driver lacks cuCtxGetCurrent");
    CUcontext saved = nullptr;
    if (getCurrent(&saved) != CUDA_SUCCESS)
      PURLIN_THROW(purlin::Status::CudaError, "purlin_preload_kernels: cuCtxGetCurrent failed");
    struct Restore {  // on every path
      SetCurrent set;
      CUcontext context;
      ~Restore() { (void)set(context); }
    } restore{setCurrent, saved};
    PURLIN_CUDA_CHECK(cudaSetDevice(device));
    purlin::preloadKernelModules(device);
  });
}

const char *purlin_last_error(void) { return purlin::lastError(); }

const char *purlin_version(void) { return PURLIN_VERSION_STRING; }

const char *purlin_dtype_name(int dtype) {
  return dtype >= 0 && dtype < purlin::kNumDTypes ? purlin::toString(static_cast<purlin::DType>(dtype)) : nullptr;
}

size_t purlin_dtype_size(int dtype) {
  return dtype >= 0 && dtype < purlin::kNumDTypes ? purlin::dtypeSize(static_cast<purlin::DType>(dtype)) : 0;
}

const char *purlin_redop_name(int op) {
  return op >= 0 && op < purlin::kNumRedOps ? purlin::toString(static_cast<purlin::RedOp>(op)) : nullptr;
}

const purlin_collective_t *purlin_collective(int index) {
  // The runtime's collectives (collectives.def, Runs = 1) in the def's
  // order, their C functions named as purlinc names the declarations of
  // dsl_examples/ (purlin_ + the kind, first letter lower case).
  struct Row {
    std::string function;
    purlin_collective_t info;
  };
  static const std::vector<Row> table = [] {
    std::vector<Row> rows(static_cast<std::size_t>(purlin::snac::kNumCollKinds));
    for (int i = 0; i < purlin::snac::kNumCollKinds; ++i) {
      const purlin::snac::CollKind k = static_cast<purlin::snac::CollKind>(i);
      const purlin::snac::def::Any a = purlin::snac::anyOf(k);
      std::string name = purlin::snac::toString(k);
      name[0] = static_cast<char>(name[0] - 'A' + 'a');
      Row &r = rows[static_cast<std::size_t>(i)];
      r.function = "purlin_" + name;
      r.info.sizes = static_cast<int>(purlin::snac::def::sizeArgs(a));
      r.info.reduces = purlin::snac::def::reduces(a) ? 1 : 0;
      r.info.rooted = purlin::snac::def::root(a) != purlin::Root::None ? 1 : 0;
    }
    // The V collectives' forms with their counts in device memory
    // (docs/device-counts.md): the function's name + "Device".
    for (int i = 0; i < purlin::snac::kNumCollKinds; ++i) {
      const Row base = rows[static_cast<std::size_t>(i)];
      const auto own = static_cast<purlin::snac::def::SizeArgs>(base.info.sizes);
      if (purlin::snac::def::deviceForm(own) == own) continue;
      Row r = base;
      r.function += "Device";
      r.info.sizes = static_cast<int>(purlin::snac::def::deviceForm(own));
      rows.push_back(r);
    }
    for (Row &r : rows) r.info.function = r.function.c_str();
    return rows;
  }();
  return index >= 0 && index < static_cast<int>(table.size()) ? &table[static_cast<std::size_t>(index)].info : nullptr;
}

const char *purlin_status_string(purlin_status_t status) {
  return purlin::toString(static_cast<purlin::Status>(status));
}

} // extern "C"

purlin::Communicator *purlin_comm_unwrap(purlin_comm_t comm) {
  return comm ? comm->comm.get() : nullptr;
}
