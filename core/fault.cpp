#include "core/fault.h"

#include <chrono>
#include <cstdlib>
#include <thread>

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

void stall_for_test() {
  for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}

}  // namespace gpuscale
