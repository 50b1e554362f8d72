#pragma once
// What counts as a host name where gpuscale takes one from the user (GPUSCALE_TEST_HOSTS, the
// slow-host test fault): letters, digits, '-', '.' and '_' (RFC 1123 names plus the underscore some
// sites use), 1 to 253 characters. Names end up in result files, reports and drain lists, so nothing
// else (spaces, quotes, separators) may pass.
#include <cstddef>
#include <string_view>

namespace gpuscale {

inline constexpr std::size_t kMaxHostNameLength = 253;

constexpr bool is_host_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxHostNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_';
    if (!ok) return false;
  }
  return true;
}

}  // namespace gpuscale
