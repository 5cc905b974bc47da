#pragma once
// The NVIDIA driver's presence and version, read from /proc without loading libcuda.

#include <optional>
#include <string>

namespace native_ops::builtin_dsls {

/// The kernel driver's version ("580.159.04"), or nullopt when no NVIDIA driver is loaded.
std::optional<std::string> nvidia_driver_version();

}  // namespace native_ops::builtin_dsls
