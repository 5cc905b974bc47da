#include <dlfcn.h>
#include <sys/stat.h>

#include <filesystem>
#include <mutex>
#include <set>

#include "native_ops/error.h"
#include "native_ops/log.h"
#include "native_ops/plugin.h"
#include "native_ops/registry.h"
#include "runtime/origin.h"

namespace native_ops {

namespace {

// Libraries of code are loaded from the path given, never searched for: a bare name would
// make dlopen search the library path, and canonical() the current directory.
void require_explicit_path(const std::string& path, const std::string& what) {
  if (path.find('/') == std::string::npos) {
    throw Error(what + " " + path + ": give its path (absolute, or ./" + path +
                " for the current directory): libraries are never searched for");
  }
}

// A library is a regular file: opening a FIFO with no writer would block forever, and a
// directory or device is no library.
void require_regular_file(const std::string& path, const std::string& what) {
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    throw Error(what + " " + path + ": is not a regular file (" +
                (S_ISDIR(info.st_mode)    ? "a directory"
                 : S_ISFIFO(info.st_mode) ? "a FIFO"
                                          : "a device or socket") +
                "): give the path of a shared library");
  }
}

// Whether any node came from `origin` (a plugin's constructors may register at dlopen).
bool registered_any(const std::string& origin) {
  for (const GraphInfo& graph : graphs()) {
    for (const NodeInfo& node : graph.nodes) {
      if (node.origin == origin) return true;
    }
  }
  return false;
}

// Refuses a plugin after dlopen: whatever it registered (from static constructors, or before
// it threw) is made unavailable first; a library that registered anything stays loaded, since
// a call walking an older node list may still reach its code.
[[noreturn]] void refuse(void* handle, const std::string& origin, const std::string& message) {
  if (registered_any(origin)) {
    detail::make_origin_unavailable(origin, "its plugin was refused: " + message);
  } else {
    dlclose(handle);
  }
  throw Error(message);
}

}  // namespace

void load_plugin(const std::string& path) {
  require_explicit_path(path, "plugin");
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  std::error_code error;
  const std::string canonical = std::filesystem::canonical(path, error).string();
  if (error) {
    throw Error("plugin " + path + ": no such file; give the path of a shared library built with NATIVE_OPS_PLUGIN");
  }
  if (loaded.count(canonical)) return;
  require_regular_file(canonical, "plugin " + path + ":");

  // Whatever its constructors register at dlopen carries its origin too.
  detail::OriginScope origin(canonical);
  // RTLD_LOCAL: a plugin's own symbols cannot interpose on another's.
  void* handle = dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    throw Error("plugin " + path + " cannot be loaded: " + dlerror());
  }
  const auto abi = reinterpret_cast<int (*)()>(dlsym(handle, "native_ops_plugin_abi"));
  const auto register_overrides = reinterpret_cast<void (*)()>(dlsym(handle, "native_ops_plugin_register"));
  if (abi == nullptr || register_overrides == nullptr) {
    refuse(handle, canonical,
           "plugin " + path +
               " is not a native-ops plugin: it defines no NATIVE_OPS_PLUGIN entry points (see native_ops/plugin.h)");
  }
  if (const int wanted = abi(); wanted != NATIVE_OPS_PLUGIN_ABI) {
    refuse(handle, canonical,
           "plugin " + path + " was built for plugin ABI " + std::to_string(wanted) + ", this native-ops has " +
               std::to_string(NATIVE_OPS_PLUGIN_ABI) + ": rebuild it against this native-ops");
  }
  // From here the library stays loaded: its conds and impls are referenced by nodes.
  loaded.insert(canonical);
  std::string failure;
  try {
    register_overrides();
  } catch (const std::exception& e) {
    failure = e.what();
  } catch (...) {
    failure = "it threw something that is not a std::exception";
  }
  if (!failure.empty()) {
    detail::make_origin_unavailable(canonical, "its plugin failed to register: " + failure);
    throw Error("plugin " + path + " failed to register its overrides: " + failure);
  }
  log::info("plugin loaded: " + canonical);
}

OrderingFn load_ordering_function(const std::string& library_and_symbol) {
  const size_t colon = library_and_symbol.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == library_and_symbol.size()) {
    throw Error("'" + library_and_symbol + "' is not LIB.so:symbol");
  }
  const std::string library = library_and_symbol.substr(0, colon);
  const std::string symbol = library_and_symbol.substr(colon + 1);
  require_explicit_path(library, "ordering function library");
  require_regular_file(library, "ordering function library");
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) throw Error("cannot load " + library + ": " + dlerror());
  const auto function = reinterpret_cast<OrderingFunctionPointer>(dlsym(handle, symbol.c_str()));
  if (function == nullptr) {
    dlclose(handle);
    throw Error(library + " defines no symbol " + symbol + ": export the ordering function as extern \"C\"");
  }
  // The library stays loaded: the ordering function lives in it.
  return function;
}

}  // namespace native_ops
