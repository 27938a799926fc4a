/// @file kernel_modules.cpp
/// @brief purlin/host/kernel_modules.h: the registered modules and their
/// loading through the driver (cuModuleEnumerateFunctions, cuFuncLoad; CUDA
/// 12.4), resolved once.
#include "purlin/host/kernel_modules.h"

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include "driver_entry.h"
#include "purlin/host/error.h"

namespace purlin {
namespace {

/// The registered modules (construct on first use: registration runs during
/// static initialization, in any order).
std::vector<KernelModuleResolver> &anchors() {
  static std::vector<KernelModuleResolver> list;
  return list;
}

/// Guards the list only: registration runs inside a library's loading
/// (the dynamic loader's lock held), so it must never wait on anything
/// that itself waits for the loader.
std::mutex &listMutex() {
  static std::mutex m;
  return m;
}

/// Serializes loading (ranks that share a process load once per device).
/// Held while resolvers and the driver run, which may load libraries
/// (a library's own CUDA runtime starting): never held with listMutex.
std::mutex &loadMutex() {
  static std::mutex m;
  return m;
}

/// The driver functions preloading needs; all null when the driver lacks one.
struct ModuleLoader {
  PFN_cuFuncGetModule_v11000 funcGetModule = nullptr;
  PFN_cuModuleGetFunctionCount_v12040 functionCount = nullptr;
  PFN_cuModuleEnumerateFunctions_v12040 enumerate = nullptr;
  PFN_cuFuncIsLoaded_v12040 isLoaded = nullptr;
  PFN_cuFuncLoad_v12040 load = nullptr;
  PFN_cuModuleGetLoadingMode_v11070 loadingMode = nullptr;
  PFN_cuGetErrorName_v6000 errorName = nullptr;

  bool available() const { return funcGetModule && functionCount && enumerate && isLoaded && load && loadingMode; }

  static const ModuleLoader &get() {
    static const ModuleLoader loader = [] {
      ModuleLoader l;
      l.funcGetModule = detail::driverEntryPoint<PFN_cuFuncGetModule_v11000>("cuFuncGetModule");
      l.functionCount = detail::driverEntryPoint<PFN_cuModuleGetFunctionCount_v12040>("cuModuleGetFunctionCount", 12040);
      l.enumerate = detail::driverEntryPoint<PFN_cuModuleEnumerateFunctions_v12040>("cuModuleEnumerateFunctions", 12040);
      l.isLoaded = detail::driverEntryPoint<PFN_cuFuncIsLoaded_v12040>("cuFuncIsLoaded", 12040);
      l.load = detail::driverEntryPoint<PFN_cuFuncLoad_v12040>("cuFuncLoad", 12040);
      l.loadingMode = detail::driverEntryPoint<PFN_cuModuleGetLoadingMode_v11070>("cuModuleGetLoadingMode");
      l.errorName = detail::driverEntryPoint<PFN_cuGetErrorName_v6000>("cuGetErrorName");
      return l;
    }();
    return loader;
  }

  /// Throws CudaError naming the driver call when `r` is not success.
  void check(CUresult r, const char *call, int device) const {
    if (r == CUDA_SUCCESS)
      return;
    const char *name = nullptr;
    if (errorName)
      (void)errorName(r, &name);
    PURLIN_THROW(Status::CudaError, "device " + std::to_string(device) + ": loading Purlin's kernels: " + call +
                                        " failed (" + (name ? name : "CUresult " + std::to_string(int(r))) + ")");
  }
};

} // namespace

bool registerKernelModule(KernelModuleResolver anchor) noexcept {
  try {
    std::lock_guard<std::mutex> lock(listMutex());
    std::vector<KernelModuleResolver> &list = anchors();
    if (std::find(list.begin(), list.end(), anchor) == list.end())  // once per unit, not per collective
      list.push_back(anchor);
  } catch (...) {
    // Out of memory during static initialization: the module stays lazily
    // loaded (the loss is only the deadlock protection of ranks sharing a
    // process).
  }
  return true;
}

void preloadKernelModules(int device) {
  const ModuleLoader &driver = ModuleLoader::get();
  if (!driver.available())
    return;  // a driver before CUDA 12.4: kernels load as the driver decides
  CUmoduleLoadingMode mode{};
  if (driver.loadingMode(&mode) == CUDA_SUCCESS && mode == CU_MODULE_EAGER_LOADING)
    return;
  // Serialized: ranks that share a process load once per device, and a rank
  // returns only after its device's modules are loaded. The list is copied
  // first (a library being loaded meanwhile registers without waiting).
  std::vector<KernelModuleResolver> list;
  {
    std::lock_guard<std::mutex> lock(listMutex());
    list = anchors();
  }
  std::lock_guard<std::mutex> lock(loadMutex());
  static std::set<std::pair<int, KernelModuleResolver>> loaded;
  for (KernelModuleResolver anchor : list) {
    if (loaded.count({device, anchor}))
      continue;
    // A module its runtime cannot resolve here (no code for this device's
    // architecture: a purlin.jit library built for another GPU) is left
    // to the launch, which reports it on the call that uses it; the
    // communicators that never do are not refused for it.
    void *anchorFunction = anchor();
    if (!anchorFunction) {
      loaded.insert({device, anchor});
      continue;
    }
    CUmodule module = nullptr;
    driver.check(driver.funcGetModule(&module, reinterpret_cast<CUfunction>(anchorFunction)), "cuFuncGetModule",
                 device);
    unsigned count = 0;
    driver.check(driver.functionCount(&count, module), "cuModuleGetFunctionCount", device);
    std::vector<CUfunction> functions(count);
    if (count > 0)
      driver.check(driver.enumerate(functions.data(), count, module), "cuModuleEnumerateFunctions", device);
    for (CUfunction f : functions) {
      CUfunctionLoadingState state{};
      driver.check(driver.isLoaded(&state, f), "cuFuncIsLoaded", device);
      if (state != CU_FUNCTION_LOADING_STATE_LOADED)
        driver.check(driver.load(f), "cuFuncLoad", device);
    }
    loaded.insert({device, anchor});
  }
}

} // namespace purlin
