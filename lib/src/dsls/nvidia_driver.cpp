#include "nvidia_driver.h"

#include <fstream>
#include <regex>

namespace native_ops::builtin_dsls {

std::optional<std::string> nvidia_driver_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ..."
  std::smatch match;
  if (std::regex_search(line, match, std::regex(R"((\d+\.\d+(\.\d+)?))"))) return match[1].str();
  return std::string("unknown");
}

}  // namespace native_ops::builtin_dsls
