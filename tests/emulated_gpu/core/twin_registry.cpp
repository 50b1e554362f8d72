// Kernel twins added at run time (twin_registry.h).
#include "tests/emulated_gpu/core/twin_registry.h"

#include <map>
#include <mutex>
#include <string>

namespace gpuscale_emu {
namespace {
struct Registry {
  std::mutex mu;
  std::map<std::string, const KernelTwin*> twins;
};
Registry& registry() {
  static auto* r = new Registry;
  return *r;
}
}  // namespace

void register_kernel_twin(const KernelTwin* twin) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().twins[twin->name] = twin;
}

const KernelTwin* find_registered_twin(const char* mangled_name) {
  std::lock_guard<std::mutex> lock(registry().mu);
  const auto it = registry().twins.find(mangled_name);
  return it == registry().twins.end() ? nullptr : it->second;
}

}  // namespace gpuscale_emu
