#pragma once
// DSLs whose kernels run through the NVIDIA driver (cuda, triton): available when the
// build holds their kernels, a driver is loaded and its library can be found. Read from
// /proc and the file system: loads no library and never initialises CUDA.

#include <memory>
#include <optional>
#include <string>

#include "native_ops/dsl.h"

namespace native_ops::builtin_dsls {

/// The kernel driver's version ("580.159.04"), or nullopt when no NVIDIA driver is loaded.
std::optional<std::string> nvidia_driver_version();

/// Where the driver's user-space library (libcuda.so.1) is, found the way the loader would
/// (LD_LIBRARY_PATH, ld.so.cache, the standard directories) without loading it.
std::optional<std::string> nvidia_driver_library();

/// A DSL of kernels launched through the NVIDIA driver. `built`: this build holds its
/// kernels; `version`: what runtime_version() reports with the driver's version;
/// `build_fix`: how to get a build that holds them.
std::unique_ptr<Dsl> make_nvidia_dsl(std::string name, bool built, std::string version, std::string build_fix);

}  // namespace native_ops::builtin_dsls
