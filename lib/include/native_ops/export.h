#pragma once
// What native-ops exports. Its libraries are built with hidden visibility: only what is
// marked NATIVE_OPS_API (the documented API of lib/include/native_ops/) is visible to a
// program or plugin that links them.

#define NATIVE_OPS_API __attribute__((visibility("default")))
