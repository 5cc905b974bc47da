// Loading the cuda DSL's kernels library, lazily, from next to libnative_ops.so.
#include "cuda_kernels.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
#include <string>

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "native_ops/error.h"

namespace native_ops::cuda {

namespace {

constexpr const char* kLibraryName = "libnative_ops_cuda_kernels.so";

// The directory libnative_ops.so was loaded from: the kernels library is installed there.
std::filesystem::path this_library_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&this_library_directory), &info) == 0 || info.dli_fname == nullptr) return {};
  return std::filesystem::path(info.dli_fname).parent_path();
}

template <class Fn>
Fn symbol(void* library, const char* name, const std::filesystem::path& path) {
  void* address = dlsym(library, name);
  if (address == nullptr) {
    throw KernelUnavailable("the cuda DSL's kernels library " + path.string() + " lacks " + name +
                ": it is from another native-ops build; rebuild and reinstall both libraries together");
  }
  return reinterpret_cast<Fn>(address);
}

Kernels load() {
  const std::filesystem::path path = this_library_directory() / kLibraryName;
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw KernelUnavailable("cannot load the cuda DSL's kernels (" + path.string() + "): " + (why ? why : "unknown error") +
                ". Build native-ops with NATIVE_OPS_CUDA=ON and keep " + kLibraryName + " next to libnative_ops.so");
  }
  return {symbol<NativeOpsOuterProductFn>(library, NATIVE_OPS_OUTER_PRODUCT_SYMBOL, path),
          symbol<NativeOpsSoftmaxRowsFn>(library, NATIVE_OPS_SOFTMAX_ROWS_SYMBOL, path),
          symbol<NativeOpsNormRowsFn>(library, NATIVE_OPS_NORM_ROWS_SYMBOL, path),
          symbol<NativeOpsRmsNormBackwardRowsFn>(library, NATIVE_OPS_RMS_NORM_BACKWARD_ROWS_SYMBOL, path),
          symbol<NativeOpsRmsNormBackwardWorkspaceFn>(library, NATIVE_OPS_RMS_NORM_BACKWARD_WORKSPACE_SYMBOL, path),
          symbol<NativeOpsCudaErrorStringFn>(library, NATIVE_OPS_CUDA_ERROR_STRING_SYMBOL, path)};
}

}  // namespace

const Kernels& kernels() {
  // Never unloaded: kernels may be queued on streams until the process ends.
  static const Kernels* loaded = new Kernels(load());
  return *loaded;
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
    default: throw Error(std::string("the cuda kernels take float32, float16 and bfloat16, not ") +
                         c10::toString(tensor.scalar_type()));
  }
}

void check(int error, const char* kernel) {
  if (error != 0) {
    throw KernelUnavailable(std::string("cuda kernel ") + kernel + " failed: " + kernels().error_string(error));
  }
}

}  // namespace native_ops::cuda
