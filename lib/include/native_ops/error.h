#pragma once
// The exception types native-ops throws: Error for bad input, and KernelUnavailable for an
// override whose kernel cannot run in this process.

#include <stdexcept>

#include "native_ops/export.h"

namespace native_ops {

/// Thrown by every native-ops API on bad input (unknown op, refused dispatch key, bad
/// environment variable, invalid ordering). The message names the problem and the fix.
/// Nothing is half-applied when it is thrown: the registry is as it was before the call.
class NATIVE_OPS_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by an override's impl when its kernel cannot run here: a missing kernel
/// artifact, no driver, a module that does not load, a launch that fails. The router
/// contains it as faults.h says (by default: aten runs instead, the node is switched off).
/// Other exceptions from an impl always reach the caller.
class NATIVE_OPS_API KernelUnavailable : public Error {
 public:
  using Error::Error;
};

}  // namespace native_ops
