// Selection tables: features functions, compiling a table against a route list, and the
// lookup the router runs.
#include "runtime/selection.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include "native_ops/error.h"
#include "native_ops/log.h"
#include "runtime/registry_state.h"

namespace native_ops {

namespace detail {

namespace {

void check_feature_names(const std::vector<std::string>& names, const std::string& what) {
  if (names.empty()) throw Error(what + ": declare at least one feature");
  if (names.size() > kMaxShapeFeatures) {
    throw Error(what + ": " + std::to_string(names.size()) + " features; an op may have " +
                std::to_string(kMaxShapeFeatures) + " at most");
  }
  std::set<std::string> seen;
  for (const std::string& name : names) {
    if (name.empty()) throw Error(what + ": a feature name is empty");
    if (!seen.insert(name).second) throw Error(what + ": the feature \"" + name + "\" is named twice");
  }
}

size_t cell_count(const SelectionGrid& grid) {
  size_t cells = 1;
  for (const auto& edges : grid.edges) cells *= edges.size() + 1;
  return cells;
}

// The driver's entry points this file uses, looked up in the libcuda.so.1 the process has
// loaded already (RTLD_NOLOAD): the caller's CUDA context is there by the time a call
// routes a CUDA tensor.
struct LoadedDriver {
  using GetDevice = int (*)(int*, int);
  using GetName = int (*)(char*, int, int);
  using GetAttribute = int (*)(int*, int, int);
  GetDevice get_device = nullptr;
  GetName get_name = nullptr;
  GetAttribute get_attribute = nullptr;
};

std::optional<LoadedDriver> loaded_driver() {
  void* handle = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return std::nullopt;
  LoadedDriver driver;
  driver.get_device = reinterpret_cast<LoadedDriver::GetDevice>(dlsym(handle, "cuDeviceGet"));
  driver.get_name = reinterpret_cast<LoadedDriver::GetName>(dlsym(handle, "cuDeviceGetName"));
  driver.get_attribute = reinterpret_cast<LoadedDriver::GetAttribute>(dlsym(handle, "cuDeviceGetAttribute"));
  dlclose(handle);  // drops the reference NOLOAD took; the library stays loaded
  if (!driver.get_device || !driver.get_name || !driver.get_attribute) return std::nullopt;
  return driver;
}

// The bucket of `value` among `edges`: bucket_of(), inlined into pick() (an exported
// function is called through the PLT).
inline size_t bucket_index(const std::vector<int64_t>& edges, int64_t value) {
  return static_cast<size_t>(std::upper_bound(edges.begin(), edges.end(), value) - edges.begin());
}

// Whether the table applies on CUDA device `index`; decided once per device.
C10_NOINLINE bool device_matches(const CompiledSelection& selection, int index) noexcept {
  auto& state = selection.devices->state[static_cast<size_t>(index)];
  uint8_t known = state.load(std::memory_order_relaxed);
  if (known == 0) {
    std::optional<TunedDevice> device;
    try {
      device = loaded_cuda_device(index);
    } catch (...) {
    }
    known = device == selection.device ? 1 : 2;
    state.store(known, std::memory_order_relaxed);
    log::info("selection table tuned on " + selection.device->name + " (" + selection.device->capability + ") " +
              (known == 1 ? "applies on" : "does not apply on") + " cuda:" + std::to_string(index) +
              (device ? ", a " + device->name + " (" + device->capability + ")" : ", which could not be read") +
              (known == 1 ? "" : ": its calls are routed in order"));
  }
  return known == 1;
}

}  // namespace

std::string selection_problem(const SelectionTable& table) {
  if (table.features.empty()) return "\"features\" is empty: name the op's features";
  if (table.features.size() > kMaxShapeFeatures) return "more than 4 features";
  std::set<c10::ScalarType> dtypes;
  for (const SelectionGrid& grid : table.grids) {
    const std::string at = dtype_name(grid.dtype) + ": ";
    if (!dtypes.insert(grid.dtype).second) return at + "the dtype has two tables";
    if (grid.edges.size() != table.features.size()) {
      return at + "has edges for " + std::to_string(grid.edges.size()) + " features, the table names " +
             std::to_string(table.features.size());
    }
    for (size_t f = 0; f < grid.edges.size(); ++f) {
      const auto& edges = grid.edges[f];
      for (size_t i = 1; i < edges.size(); ++i) {
        if (edges[i] <= edges[i - 1]) {
          return at + "the edges of \"" + table.features[f] + "\" must increase: " + std::to_string(edges[i - 1]) +
                 " then " + std::to_string(edges[i]);
        }
      }
      if (edges.size() > 1024) return at + "more than 1024 edges for \"" + table.features[f] + "\"";
    }
    const size_t cells = cell_count(grid);
    if (grid.cells.size() != cells) {
      return at + "has " + std::to_string(grid.cells.size()) + " cells; its edges make " + std::to_string(cells) +
             " buckets (the product of each feature's edges + 1)";
    }
    if (!grid.margins.empty() && grid.margins.size() != cells) {
      return at + "has " + std::to_string(grid.margins.size()) + " margins for " + std::to_string(cells) +
             " cells: give one per cell, or none";
    }
    for (const double margin : grid.margins) {
      if (!(margin > 0) || !std::isfinite(margin)) return at + "a margin is not a positive number";
    }
  }
  return "";
}

std::string selection_fit_problem(const SelectionTable& table, std::string_view op, std::string_view key,
                                  const std::vector<std::string>* features, const std::vector<std::string>& ids) {
  if (features == nullptr) {
    return std::string(op) +
           " declares no shape features, so no table can select its nodes: register_shape_features() first";
  }
  if (*features != table.features) {
    std::string names;
    for (const std::string& name : *features) names += (names.empty() ? "" : ", ") + name;
    return "the features must be those of " + std::string(op) + ", in order: " + names;
  }
  for (const SelectionGrid& grid : table.grids) {
    for (size_t i = 0; i < grid.cells.size(); ++i) {
      const std::string& cell = grid.cells[i];
      if (cell == "aten" || std::find(ids.begin(), ids.end(), cell) != ids.end()) continue;
      return "tables/" + dtype_name(grid.dtype) + "/cells/" + std::to_string(i) + ": \"" + excerpt(cell) +
             "\" is neither \"aten\" nor a node of " + std::string(op) + " @ " + std::string(key) + "." +
             did_you_mean(cell, ids);
    }
  }
  return "";
}

void check_selection_for(const GraphEntry& graph, const SelectionTable& table) {
  const std::string at = "selection table of " + graph.label() + ": ";
  if (const std::string problem = selection_problem(table); !problem.empty()) throw Error(at + problem);
  const OpFeatures* features = find_features(graph.lib_symbol, graph.op_symbol);
  std::vector<std::string> ids;
  for (const auto& node : graph.nodes) ids.push_back(node->id);
  if (const std::string problem = selection_fit_problem(table, graph.qualified_name, c10::toString(graph.key),
                                                        features != nullptr ? &features->names : nullptr, ids);
      !problem.empty()) {
    throw Error(at + problem);
  }
  if (features->typed != graph.typed) {
    throw Error(at + "the op's features were registered " + (features->typed ? "typed" : "boxed") +
                " but the graph is " + (graph.typed ? "typed" : "boxed"));
  }
}

std::shared_ptr<const CompiledSelection> compile_selection(const SelectionTable& table,
                                                           const std::vector<const Node*>& nodes,
                                                           std::shared_ptr<DeviceMatches> devices) {
  auto compiled = std::make_shared<CompiledSelection>();
  compiled->device = table.device;
  compiled->devices = std::move(devices);
  for (const SelectionGrid& grid : table.grids) {
    CompiledSelection::Grid out{grid.dtype, grid.edges.size(), {}, {}, {}};
    size_t stride = 1;
    for (size_t f = grid.edges.size(); f-- > 0;) {
      out.edges[f] = grid.edges[f];
      out.strides[f] = stride;
      stride *= grid.edges[f].size() + 1;
    }
    for (const std::string& cell : grid.cells) {
      int16_t index = kPickAten;
      if (cell != "aten") {
        const auto found = std::find_if(nodes.begin(), nodes.end(), [&](const Node* node) { return node->id == cell; });
        index = found == nodes.end() ? static_cast<int16_t>(kPickInOrder) : static_cast<int16_t>(found - nodes.begin());
      }
      out.cells.push_back(index);
    }
    compiled->grids.push_back(std::move(out));
  }
  return compiled;
}

int pick(const CompiledSelection& selection, const ShapeFeatures& features) noexcept {
  for (const CompiledSelection::Grid& grid : selection.grids) {
    if (grid.dtype != features.dtype) continue;
    if (features.count != grid.features) return kPickInOrder;
    if (selection.device) {
      const int device = features.cuda_device;
      if (device < 0 || static_cast<size_t>(device) >= selection.devices->state.size() ||
          !device_matches(selection, device)) {
        return kPickInOrder;
      }
    }
    size_t cell = 0;
    for (size_t f = 0; f < grid.features; ++f) {
      cell += detail::bucket_index(grid.edges[f], features.values[f]) * grid.strides[f];
    }
    return grid.cells[cell];
  }
  return kPickInOrder;
}

void register_features(std::string_view lib_symbol, std::string_view op_symbol, std::vector<std::string> names,
                       std::unique_ptr<FeaturesFunction> fn, bool typed) {
  const std::string label = std::string(lib_symbol) + "::" + std::string(op_symbol);
  check_feature_names(names, "features of " + label);
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.features.count(label)) throw Error("features of " + label + " are registered already: declare them once");
  r.features.emplace(label, OpFeatures{std::move(names), typed, std::move(fn)});
}

const OpFeatures* find_features(std::string_view lib_symbol, std::string_view op_symbol) {
  const Registry& r = registry();
  const auto found = r.features.find(std::string(lib_symbol) + "::" + std::string(op_symbol));
  return found == r.features.end() ? nullptr : &found->second;
}

}  // namespace detail

ShapeFeatures tensor_features(const at::Tensor& input, std::initializer_list<int64_t> values) {
  ShapeFeatures features;
  features.dtype = input.scalar_type();
  features.cuda_device = input.is_cuda() ? static_cast<int8_t>(input.get_device()) : int8_t{-1};
  for (const int64_t value : values) {
    if (features.count == kMaxShapeFeatures) break;
    features.values[features.count++] = value;
  }
  return features;
}

ShapeFeatures row_features(const at::Tensor& input, int64_t width) {
  return tensor_features(input, {width > 0 ? input.numel() / width : 0, width});
}

void register_shape_features(std::string_view lib_symbol, std::string_view op_symbol, std::vector<std::string> names,
                             std::function<ShapeFeatures(const BoxedArgs&)> fn) {
  auto features = std::make_unique<detail::BoxedFeatures>();
  features->fn = std::move(fn);
  detail::register_features(lib_symbol, parse_op_symbol(op_symbol).str(), std::move(names), std::move(features),
                            /*typed=*/false);
}

std::optional<std::vector<std::string>> shape_feature_names(std::string_view op_symbol) {
  detail::ensure_builtins();
  detail::Registry& r = detail::registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const detail::OpFeatures* features = detail::find_features("aten", parse_op_symbol(op_symbol).str());
  if (features == nullptr) return std::nullopt;
  return features->names;
}

ShapeFeatures shape_features_of(std::string_view op_symbol, const torch::jit::Stack& arguments) {
  detail::ensure_builtins();
  const OpSymbol symbol = parse_op_symbol(op_symbol);
  const auto op = c10::Dispatcher::singleton().findSchema({"aten::" + symbol.name, symbol.overload});
  if (!op) throw Error(unknown_op_message("aten", symbol));
  const detail::FeaturesFunction* fn = nullptr;
  {
    detail::Registry& r = detail::registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    const detail::OpFeatures* features = detail::find_features("aten", symbol.str());
    if (features == nullptr) throw Error("aten::" + symbol.str() + " declares no shape features");
    fn = features->fn.get();  // never removed
  }
  return fn->of(op->schema(), arguments);
}

size_t bucket_of(const std::vector<int64_t>& edges, int64_t value) { return detail::bucket_index(edges, value); }

std::string bucket_range(const std::vector<int64_t>& edges, size_t bucket) {
  const std::string low = bucket == 0 ? "-inf" : std::to_string(edges[bucket - 1]);
  const std::string high = bucket >= edges.size() ? "inf" : std::to_string(edges[bucket]);
  return "[" + low + ", " + high + ")";
}

std::optional<TunedDevice> loaded_cuda_device(int index) {
  const std::optional<detail::LoadedDriver> driver = detail::loaded_driver();
  if (!driver) return std::nullopt;
  int device = 0;
  if (driver->get_device(&device, index) != 0) return std::nullopt;
  char name[256] = {};
  int major = 0;
  int minor = 0;
  constexpr int kMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  constexpr int kMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
  if (driver->get_name(name, sizeof(name) - 1, device) != 0 || driver->get_attribute(&major, kMajor, device) != 0 ||
      driver->get_attribute(&minor, kMinor, device) != 0) {
    return std::nullopt;
  }
  return TunedDevice{name, std::to_string(major) + "." + std::to_string(minor)};
}

std::vector<std::string> nvidia_gpu_models() {
  std::error_code ignored;
  std::vector<std::filesystem::path> gpus;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ignored)) {
    gpus.push_back(entry.path());
  }
  std::sort(gpus.begin(), gpus.end());  // the directories are named by PCI bus id
  std::vector<std::string> models;
  for (const auto& gpu : gpus) {
    std::ifstream file(gpu / "information");
    std::string line;
    while (std::getline(file, line)) {
      // "Model: 		 NVIDIA H200"
      if (line.rfind("Model:", 0) == 0) {
        const size_t start = line.find_first_not_of(" \t", 6);
        if (start != std::string::npos) models.push_back(line.substr(start));
        break;
      }
    }
  }
  return models;
}

}  // namespace native_ops
