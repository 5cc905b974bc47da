#include "dsls/nvidia_driver.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

namespace native_ops::builtin_dsls {

namespace {

std::optional<std::string> read_driver_version() {
  std::ifstream file("/proc/driver/nvidia/version");
  std::string line;
  if (!file || !std::getline(file, line)) return std::nullopt;
  // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Tue ...": the first word
  // of digits and dots with a dot in it. Parsed by hand: std::regex is the suspect in a
  // crash of the module loaded into Python after `import torch` on the H200 machine (its
  // template code may bind to libtorch's own instantiations, built by another compiler).
  std::istringstream words(line);
  std::string word;
  while (words >> word) {
    const bool version = word.find('.') != std::string::npos && std::isdigit(static_cast<unsigned char>(word[0])) &&
                         word.find_first_not_of("0123456789.") == std::string::npos;
    if (version) return word;
  }
  return std::string("unknown");
}

}  // namespace

namespace {

std::optional<std::string> find_driver_library() {
  constexpr const char* kName = "libcuda.so.1";
  std::vector<std::string> directories;
  if (const char* path = std::getenv("LD_LIBRARY_PATH")) {
    std::string list = path;
    for (size_t start = 0; start <= list.size();) {
      const size_t end = std::min(list.find(':', start), list.size());
      if (end > start) directories.push_back(list.substr(start, end - start));
      start = end + 1;
    }
  }
  // The loader's cache holds "/dir/libcuda.so.1" strings for what ldconfig found.
  std::ifstream cache("/etc/ld.so.cache", std::ios::binary);
  const std::string entries((std::istreambuf_iterator<char>(cache)), std::istreambuf_iterator<char>());
  for (size_t at = entries.find(std::string("/") + kName); at != std::string::npos;
       at = entries.find(std::string("/") + kName, at + 1)) {
    const size_t start = entries.rfind('\0', at);
    directories.push_back(entries.substr(start == std::string::npos ? 0 : start + 1, at - start - 1));
  }
  for (const char* standard : {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/wsl/lib"}) {
    directories.push_back(standard);
  }
  std::error_code ignored;
  for (const std::string& directory : directories) {
    const std::filesystem::path candidate = std::filesystem::path(directory) / kName;
    if (std::filesystem::exists(candidate, ignored)) return candidate.string();
  }
  return std::nullopt;
}

}  // namespace

// Each DSL asks once per node it checks: probe the file system once per process (a driver
// is not installed or removed under a running process).
std::optional<std::string> nvidia_driver_version() {
  static const std::optional<std::string> version = read_driver_version();
  return version;
}

std::optional<std::string> nvidia_driver_library() {
  static const std::optional<std::string> library = find_driver_library();
  return library;
}

namespace {

class NvidiaDsl final : public Dsl {
 public:
  NvidiaDsl(std::string name, bool built, std::string version, std::string build_fix)
      : name_(std::move(name)), built_(built), version_(std::move(version)), build_fix_(std::move(build_fix)) {}

  std::string_view name() const override { return name_; }
  bool runtime_available() const override {
    return built_ && nvidia_driver_version().has_value() && nvidia_driver_library().has_value();
  }
  std::string runtime_version() const override {
    const auto driver = nvidia_driver_version();
    return built_ && driver ? version_ + ", driver " + *driver : "";
  }
  std::string unavailable_reason() const override {
    if (!built_) return build_fix_;
    if (!nvidia_driver_version()) {
      return "no NVIDIA driver is loaded (/proc/driver/nvidia/version is missing): run on a machine with an "
             "NVIDIA GPU and its driver";
    }
    if (!nvidia_driver_library()) {
      return "the NVIDIA driver's library libcuda.so.1 is not on the loader's path (ld.so.cache, LD_LIBRARY_PATH): "
             "install the driver's user-space libraries or add their directory to LD_LIBRARY_PATH";
    }
    return "";
  }

 private:
  std::string name_;
  bool built_;
  std::string version_;
  std::string build_fix_;
};

}  // namespace

std::unique_ptr<Dsl> make_nvidia_dsl(std::string name, bool built, std::string version, std::string build_fix) {
  return std::make_unique<NvidiaDsl>(std::move(name), built, std::move(version), std::move(build_fix));
}

}  // namespace native_ops::builtin_dsls
