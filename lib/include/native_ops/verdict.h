#pragma once
// What a cond decides about a call.

namespace native_ops {

/// A cond returns a bool, or a Verdict that also says why it declines:
///
///   [](const at::Tensor& a, const at::Tensor& b) -> native_ops::Verdict {
///     if (a.size(2) != 1) return native_ops::decline("inner dimension is not 1");
///     return true;
///   }
///
/// The reason must be a string that lives as long as the program (a literal): the router
/// never copies it, so declining costs nothing. `native-ops explain` prints it.
class Verdict {
 public:
  /// true: accept; false: decline without a reason.
  constexpr Verdict(bool accepted) : reason_(accepted ? nullptr : "") {}  // NOLINT: implicit on purpose
  constexpr bool accepted() const { return reason_ == nullptr; }
  /// Why the cond declined ("" if it gave no reason); nullptr when it accepted.
  constexpr const char* reason() const { return reason_; }

 private:
  friend constexpr Verdict decline(const char* why);
  constexpr Verdict() : reason_(nullptr) {}
  const char* reason_;
};

/// Declines a call and says why. `why` must outlive the program's use of it (a literal).
constexpr Verdict decline(const char* why) {
  Verdict verdict;
  verdict.reason_ = why;
  return verdict;
}

}  // namespace native_ops
