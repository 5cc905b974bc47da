// Loading the cuda DSL's kernels library, lazily, from next to the runtime library.
#include "dsls/cuda/kernels_library.h"

#include <dlfcn.h>

#include <filesystem>
#include <string>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "native_ops/error.h"

namespace native_ops::cuda {

namespace {

constexpr const char* kLibraryName = "libnative_ops_cuda_kernels.so";

// The directory the runtime library was loaded from: the kernels library is installed there.
std::filesystem::path this_library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_library_directory), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(info.dli_fname).parent_path();
}

// The library, loaded once; never unloaded: kernels may be queued on streams until the
// process ends.
struct Library {
  std::filesystem::path path;
  void* handle;
};

Library load() {
  const std::filesystem::path path = this_library_directory() / kLibraryName;
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    throw KernelUnavailable(
        "cannot load the cuda DSL's kernels (" + path.string() + "): " + (why ? why : "unknown error") +
        ". Build native-ops with NATIVE_OPS_CUDA=ON and keep " + kLibraryName + " next to the runtime library");
  }
  return {path, handle};
}

}  // namespace

void* kernel_symbol(const char* symbol) {
  static const Library library = load();
  void* address = dlsym(library.handle, symbol);
  if (address == nullptr) {
    throw KernelUnavailable("the cuda DSL's kernels library " + library.path.string() + " lacks " + symbol +
                            ": it is from another native-ops build; rebuild and reinstall both libraries together");
  }
  return address;
}

void* current_stream(const at::Tensor& tensor) {
  const auto* guard = c10::impl::getDeviceGuardImpl(c10::DeviceType::CUDA);
  return guard->getStreamNativeHandle(guard->getStream(tensor.device()));
}

int dtype_code(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return kNativeOpsFloat32;
    case at::kHalf: return kNativeOpsFloat16;
    case at::kBFloat16: return kNativeOpsBFloat16;
    default:
      throw Error(std::string("the cuda kernels take float32, float16 and bfloat16, not ") +
                  c10::toString(tensor.scalar_type()));
  }
}

void check(int error, const char* what) {
  if (error != 0) {
    static const auto error_string = kernel<NativeOpsCudaErrorStringFn>(NATIVE_OPS_CUDA_ERROR_STRING_SYMBOL);
    throw KernelUnavailable(std::string("cuda kernel ") + what + " failed: " + error_string(error));
  }
}

}  // namespace native_ops::cuda
