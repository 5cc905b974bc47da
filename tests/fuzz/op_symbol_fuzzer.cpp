// libFuzzer target: the op-symbol parser ("bmm", "add_.Tensor"). Any input must parse or
// be refused with native_ops::Error; a parsed symbol must print back to itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "native_ops/error.h"
#include "native_ops/names.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const native_ops::OpSymbol symbol = native_ops::parse_op_symbol(text);
    if (native_ops::parse_op_symbol(symbol.str()).str() != symbol.str()) std::abort();
  } catch (const native_ops::Error&) {
  }
  return 0;
}
