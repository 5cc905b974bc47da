// libFuzzer target: explain's input-spec parser ("f32[8,128,1], -1, false"). Any input
// must parse or be refused with native_ops::Error; nothing else may escape or crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "native_ops/error.h"
#include "native_ops/testing/arg_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    native_ops::parse_arg_spec(text);
  } catch (const native_ops::Error&) {
  }
  return 0;
}
