#include "core/fault.h"

#include <cstdlib>

namespace gpuscale {

bool fault_injected(std::string_view fault) {
  const char* env = std::getenv(kFaultEnv);
  if (env == nullptr) return false;
  std::string_view list(env);
  while (!list.empty()) {
    auto comma = list.find(',');
    auto item = list.substr(0, comma);
    if (item == fault) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace gpuscale
