/// @file c_api.cpp
/// @brief The C ABI of purlin.h: handles own a bootstrap and a Communicator;
/// every entry point converts exceptions into a status and a thread-local
/// message and never throws.
#include "purlin/last_error.h"
#include "purlin/purlin.h"

#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include <cuda_runtime_api.h>

#include "purlin/host/communicator.h"

struct purlin_comm {
  std::unique_ptr<purlin::Bootstrap> bootstrap;
  std::unique_ptr<purlin::Communicator> comm;
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
static_assert(PURLIN_FLOAT32 == int(purlin::DType::F32) &&
                  PURLIN_FLOAT16 == int(purlin::DType::F16) &&
                  PURLIN_BFLOAT16 == int(purlin::DType::BF16) &&
                  PURLIN_SUM == int(purlin::RedOp::Sum) &&
                  PURLIN_MAX == int(purlin::RedOp::Max) &&
                  PURLIN_MIN == int(purlin::RedOp::Min),
              "purlin_dtype_t / purlin_redop_t must equal purlin::DType / RedOp");

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
};

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
  UnixArgs args{path, rank, size};
  return create(
      [](const void *a) -> std::unique_ptr<purlin::Bootstrap> {
        auto *u = static_cast<const UnixArgs *>(a);
        const char *cookie = std::getenv("PURLIN_BOOTSTRAP_COOKIE");
        return std::make_unique<purlin::UnixSocketBootstrap>(u->path, u->rank, u->size, 60000,
                                                             cookie ? cookie : "");
      },
      &args, device, options, comm);
}

purlin_status_t purlin_comm_destroy(purlin_comm_t comm) {
  return purlin::capi::guard([&] { delete comm; });
}

int purlin_comm_rank(purlin_comm_t comm) { return comm ? comm->comm->rank() : -1; }
int purlin_comm_size(purlin_comm_t comm) { return comm ? comm->comm->size() : -1; }

purlin_status_t purlin_comm_async_error(purlin_comm_t comm) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_async_error: null handle");
  return purlin::capi::guard([&] { comm->comm->checkDeviceErrors(); });
}

purlin_status_t purlin_comm_check(purlin_comm_t comm) { return purlin_comm_async_error(comm); }

purlin_status_t purlin_comm_abort(purlin_comm_t comm) {
  if (!comm)
    return purlin::capi::fail(PURLIN_INVALID_ARGUMENT, "purlin_comm_abort: null handle");
  comm->comm->abort();
  return PURLIN_OK;
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

const char *purlin_last_error(void) { return purlin::lastError(); }

const char *purlin_status_string(purlin_status_t status) {
  return purlin::toString(static_cast<purlin::Status>(status));
}

} // extern "C"

purlin::Communicator *purlin_comm_unwrap(purlin_comm_t comm) {
  return comm ? comm->comm.get() : nullptr;
}
