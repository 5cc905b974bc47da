#pragma once
// The one exception type native-ops throws for bad input.

#include <stdexcept>

namespace native_ops {

/// Thrown by every native-ops API on bad input (unknown op, refused dispatch key, bad
/// environment variable, invalid ordering). The message names the problem and the fix.
/// Nothing is half-applied when it is thrown: the registry is as it was before the call.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace native_ops
