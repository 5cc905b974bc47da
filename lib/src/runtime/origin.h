#pragma once
// Who is registering nodes on this thread: NodeInfo::origin. Internal to lib/src.

#include <string>

namespace native_ops::detail {

/// The origin of the nodes registered on this thread now ("program" outside any scope).
const std::string& registering_origin();

/// Sets the origin of the nodes registered on this thread while it lives.
class OriginScope {
 public:
  explicit OriginScope(std::string origin);
  ~OriginScope();
  OriginScope(const OriginScope&) = delete;
  OriginScope& operator=(const OriginScope&) = delete;

 private:
  std::string previous_;
};

/// Makes every node of `origin` unavailable with `reason` (a plugin whose registration failed).
void make_origin_unavailable(const std::string& origin, const std::string& reason);

}  // namespace native_ops::detail
