#include <fmt/format.h>

#include "backends/backend.h"
#include "core/error.h"

namespace gpuscale {

std::vector<std::string> compiled_backends() {
#ifdef GPUSCALE_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::unique_ptr<Backend> open_backend(const std::string& choice, const World& world, const RunOptions& opts,
                                      std::string* why_chosen) {
  if (choice == "cpu") {
    *why_chosen = "--backend cpu";
    return make_cpu_backend(world, opts);
  }
  if (choice != "cuda" && choice != "auto")
    throw Error(fmt::format("unknown backend '{}' (use cpu, cuda or auto)", choice));
#ifdef GPUSCALE_HAVE_CUDA
  std::string why_none;
  const int gpus = cuda_visible_devices(&why_none);
  if (gpus > 0) {
    *why_chosen = choice == "cuda" ? "--backend cuda" : fmt::format("auto: {} CUDA device(s) visible", gpus);
    return make_cuda_backend(world, opts);
  }
  if (choice == "cuda") throw Error(fmt::format("no CUDA device: {}", why_none), kExitNoDevice);
  *why_chosen = fmt::format("auto: no CUDA device ({}), using the CPU backend", why_none);
#else
  if (choice == "cuda")
    throw Error("no CUDA device: this gpuscale was built without the CUDA backend (configure with -DGPUSCALE_CUDA=ON)",
                kExitNoDevice);
  *why_chosen = "auto: built without the CUDA backend, using the CPU backend";
#endif
  return make_cpu_backend(world, opts);
}

}  // namespace gpuscale
