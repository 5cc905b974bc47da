// The CUDA driver API, opened lazily, and per-device modules of the triton DSL's kernels.
#include "dsls/triton/launch.h"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include <ATen/ops/empty.h>
#include <c10/core/DeviceGuard.h>

#include "dsls/cuda/kernels_library.h"
#include "native_ops/error.h"

namespace native_ops::triton {

namespace {

// The few driver API types and calls used, as the driver's C ABI defines them (cuda.h is
// not needed to build this file).
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
struct CUlaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    struct {
      unsigned x, y, z;
    } cluster_dim;
  } value;
};
struct CUlaunchConfig {
  unsigned grid_x, grid_y, grid_z, block_x, block_y, block_z, shared_bytes;
  CUstream stream;
  CUlaunchAttribute* attributes;
  unsigned attribute_count;
};
constexpr int kLaunchAttributeClusterDimension = 4;  // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
constexpr int kMaxDynamicSharedSizeBytes = 8;        // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int kNonPortableClusterSizeAllowed = 14;   // CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED
constexpr unsigned kPortableClusterSize = 8;
constexpr int kDefaultSharedLimit = 48 * 1024;
constexpr int kMultiprocessorCount = 16;  // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*device_get)(CUdevice*, int);
  CUresult (*device_get_attribute)(int*, int, CUdevice);
  CUresult (*primary_context_retain)(CUcontext*, CUdevice);
  CUresult (*context_get_current)(CUcontext*);
  CUresult (*context_set_current)(CUcontext);
  CUresult (*module_load_data)(CUmodule*, const void*);
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*);
  CUresult (*function_set_attribute)(CUfunction, int, int);
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**);
  CUresult (*launch_kernel_ex)(const CUlaunchConfig*, CUfunction, void**, void**);
  CUresult (*error_string)(CUresult, const char**);
};

template <class Fn>
void bind(void* library, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (fn == nullptr)
    throw KernelUnavailable(std::string("the CUDA driver library lacks ") + name + ": update the NVIDIA driver");
}

Driver open_driver() {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    throw KernelUnavailable(std::string("the triton DSL cannot load the CUDA driver (libcuda.so.1): ") +
                            (why ? why : "not found") +
                            ". Install the NVIDIA driver, or add its directory to LD_LIBRARY_PATH");
  }
  Driver d{};
  bind(library, "cuInit", d.init);
  bind(library, "cuDeviceGet", d.device_get);
  bind(library, "cuDeviceGetAttribute", d.device_get_attribute);
  bind(library, "cuDevicePrimaryCtxRetain", d.primary_context_retain);
  bind(library, "cuCtxGetCurrent", d.context_get_current);
  bind(library, "cuCtxSetCurrent", d.context_set_current);
  bind(library, "cuModuleLoadData", d.module_load_data);
  bind(library, "cuModuleGetFunction", d.module_get_function);
  bind(library, "cuFuncSetAttribute", d.function_set_attribute);
  bind(library, "cuLaunchKernel", d.launch_kernel);
  bind(library, "cuLaunchKernelEx", d.launch_kernel_ex);
  bind(library, "cuGetErrorString", d.error_string);
  return d;
}

const Driver& driver() {
  static const Driver opened = open_driver();  // never closed: modules live until exit
  return opened;
}

void check(CUresult result, const char* what, const Artifact& artifact) {
  if (result == 0) return;
  const char* message = nullptr;
  driver().error_string(result, &message);
  throw KernelUnavailable(std::string("triton kernel ") + artifact.key + ": " + what +
                          " failed: " + (message ? message : "CUDA driver error " + std::to_string(result)));
}

constexpr int kMaxDevices = 64;

// Per device: its primary context (torch's runtime uses the same one), its multiprocessor
// count and, per artifact, the loaded function. Written once under the mutex, then read
// without a lock.
struct DeviceModules {
  std::atomic<CUcontext> context{nullptr};
  std::atomic<int> multiprocessors{0};  // written before the context
  std::unique_ptr<std::atomic<CUfunction>[]> functions;
};

struct Modules {
  std::mutex loading;
  std::array<DeviceModules, kMaxDevices> devices;
  Modules() {
    for (DeviceModules& device : devices) device.functions.reset(new std::atomic<CUfunction>[artifacts().size]());
  }
};

Modules& modules() {
  static Modules* all = new Modules();  // never destroyed: kernels may run until exit
  return *all;
}

struct Loaded {
  CUcontext context;
  CUfunction function;
};

Loaded load(const Artifact& artifact, int device_index) {
  if (device_index < 0 || device_index >= kMaxDevices) {
    throw Error("triton kernels run on devices 0 to " + std::to_string(kMaxDevices - 1) + ", not " +
                std::to_string(device_index));
  }
  DeviceModules& device = modules().devices[device_index];
  const size_t index = static_cast<size_t>(&artifact - artifacts().data);
  CUfunction function = device.functions[index].load(std::memory_order_acquire);
  CUcontext context = device.context.load(std::memory_order_acquire);
  if (function != nullptr) return {context, function};

  const std::lock_guard<std::mutex> lock(modules().loading);
  const Driver& d = driver();
  if (context == nullptr) {
    check(d.init(0), "cuInit", artifact);
    CUdevice handle = 0;
    check(d.device_get(&handle, device_index), "cuDeviceGet", artifact);
    check(d.primary_context_retain(&context, handle), "cuDevicePrimaryCtxRetain", artifact);
    int multiprocessors = 0;
    check(d.device_get_attribute(&multiprocessors, kMultiprocessorCount, handle), "cuDeviceGetAttribute", artifact);
    device.multiprocessors.store(multiprocessors, std::memory_order_relaxed);
    device.context.store(context, std::memory_order_release);
  }
  function = device.functions[index].load(std::memory_order_acquire);
  if (function != nullptr) return {context, function};
  CUcontext previous = nullptr;
  check(d.context_get_current(&previous), "cuCtxGetCurrent", artifact);
  check(d.context_set_current(context), "cuCtxSetCurrent", artifact);
  CUmodule module = nullptr;
  CUresult result = d.module_load_data(&module, artifact.cubin);
  if (result == 0) result = d.module_get_function(&function, module, artifact.name);
  if (result == 0 && artifact.shared > kDefaultSharedLimit) {
    result = d.function_set_attribute(function, kMaxDynamicSharedSizeBytes, artifact.shared);
  }
  if (result == 0 && artifact.max_cluster > kPortableClusterSize) {
    result = d.function_set_attribute(function, kNonPortableClusterSizeAllowed, 1);
  }
  d.context_set_current(previous);
  check(result, "loading its module", artifact);
  device.functions[index].store(function, std::memory_order_release);
  return {context, function};
}

}  // namespace

const Artifact& find(std::string_view key) {
  const ArtifactTable table = artifacts();
  for (size_t i = 0; i < table.size; ++i) {
    if (key == table.data[i].key) return table.data[i];
  }
  throw KernelUnavailable("this build has no triton kernel " + std::string(key) +
                          (table.size == 0
                               ? ": it was configured without Triton (make triton==3.6.0 importable by the build's "
                                 "Python and configure again)"
                               : ": rebuild, so that lib/src/dsls/triton/aot.py compiles kernels/*/triton.py again"));
}

int dtype_index(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat: return 0;
    case at::kHalf: return 1;
    case at::kBFloat16: return 2;
    default:
      throw Error(std::string("the triton kernels take float32, float16 and bfloat16, not ") +
                  c10::toString(tensor.scalar_type()));
  }
}

int programs_per_multiprocessor(int num_warps) { return std::max(1, 32 / num_warps); }

Grid persistent_grid(const Artifact& artifact, int64_t pieces, const at::Tensor& on) {
  load(artifact, on.device().index());  // the device's context, and its count with it
  const int multiprocessors = modules().devices[on.device().index()].multiprocessors.load(std::memory_order_relaxed);
  const int64_t programs = int64_t{multiprocessors} * programs_per_multiprocessor(artifact.num_warps);
  return {static_cast<unsigned>(std::min<int64_t>(pieces, programs))};
}

void launch(const Artifact& artifact, Grid grid, std::initializer_list<const void*> arguments, const at::Tensor& on) {
  constexpr size_t kMaxArguments = 30;
  if (arguments.size() != static_cast<size_t>(artifact.arguments) || arguments.size() > kMaxArguments) {
    throw Error(std::string("triton kernel ") + artifact.key + " takes " + std::to_string(artifact.arguments) +
                " arguments, not " + std::to_string(arguments.size()));
  }
  if (grid.cluster == 0 || grid.cluster > artifact.max_cluster || grid.x % grid.cluster != 0) {
    throw Error(std::string("triton kernel ") + artifact.key + " cannot run in clusters of " +
                std::to_string(grid.cluster) + " over " + std::to_string(grid.x) + " programs: " +
                (artifact.max_cluster > 1
                     ? "clusters of 1 to " + std::to_string(artifact.max_cluster) + " that divide the grid"
                     : std::string("it does not exchange through a cluster")));
  }
  const c10::DeviceGuard guard(on.device());
  const Loaded loaded = load(artifact, on.device().index());
  const Driver& d = driver();
  CUcontext current = nullptr;
  check(d.context_get_current(&current), "cuCtxGetCurrent", artifact);
  if (current != loaded.context) check(d.context_set_current(loaded.context), "cuCtxSetCurrent", artifact);

  // Triton appends a global and a profile scratch pointer: null unless the kernel uses them
  // (lib/src/dsls/triton/aot.py refuses kernels that profile).
  at::Tensor global_scratch;
  void* global_scratch_pointer = nullptr;
  if (artifact.global_scratch_size > 0) {
    const int64_t programs = int64_t{grid.x} * grid.y * grid.z;
    // The caching allocator's blocks are aligned far beyond global_scratch_align.
    global_scratch = at::empty({programs * artifact.global_scratch_size}, on.options().dtype(at::kByte));
    global_scratch_pointer = global_scratch.mutable_data_ptr();
  }
  void* profile_scratch_pointer = nullptr;
  std::array<void*, kMaxArguments + 2> parameters{};
  size_t count = 0;
  for (const void* argument : arguments) parameters[count++] = const_cast<void*>(argument);
  parameters[count++] = &global_scratch_pointer;
  parameters[count++] = &profile_scratch_pointer;
  const auto stream = static_cast<CUstream>(cuda::current_stream(on));
  const unsigned threads = 32 * static_cast<unsigned>(artifact.num_warps);
  const auto shared = static_cast<unsigned>(artifact.shared);
  if (grid.cluster == 1) {
    check(d.launch_kernel(loaded.function, grid.x, grid.y, grid.z, threads, 1, 1, shared, stream, parameters.data(),
                          nullptr),
          "cuLaunchKernel", artifact);
    return;
  }
  CUlaunchAttribute cluster{};
  cluster.id = kLaunchAttributeClusterDimension;
  cluster.value.cluster_dim = {grid.cluster, 1, 1};
  const CUlaunchConfig config{grid.x, grid.y, grid.z, threads, 1, 1, shared, stream, &cluster, 1};
  check(d.launch_kernel_ex(&config, loaded.function, parameters.data(), nullptr), "cuLaunchKernelEx", artifact);
}

}  // namespace native_ops::triton
