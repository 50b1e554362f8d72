#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "backends/cuda/device_binding.h"
#include "backends/cuda_module/cuda_library_plan.h"
#include "backends/cuda_module/cuda_loader.h"
#include "core/error.h"

namespace gpuscale {

std::vector<std::string> compiled_backends() {
#ifdef GPUSCALE_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

std::unique_ptr<Backend> open_backend(const std::string& choice, const World& world, const BackendOptions& opts,
                                      std::string* why_chosen) {
  if (choice == "cpu") {
    *why_chosen = "--backend cpu";
    return make_cpu_backend(world, opts);
  }
  if (choice != "cuda" && choice != "auto")
    throw Error(fmt::format("unknown backend '{}' (use cpu, cuda or auto)", choice));
#ifndef GPUSCALE_HAVE_CUDA
  if (choice == "cuda")
    throw Error("no CUDA device: this gpuscale was built without the CUDA backend (configure with -DGPUSCALE_CUDA=ON)",
                kExitNoDevice);
  *why_chosen = "auto: built without the CUDA backend, using the CPU backend";
#else
  // Every rank takes the same branch: the backends' constructors talk to each other. A rank without
  // the CUDA libraries (its module not loadable) counts as a rank without GPUs, with that reason.
  std::string why_none;
  BackendOptions cuda_opts = opts;
  bool slices_ok = true;
  try {  // before anything starts CUDA: a process sees the slice CUDA_VISIBLE_DEVICES names, or the first
    auto env = [](const char* name) {
      const char* v = std::getenv(name);
      return v ? std::optional<std::string>(v) : std::nullopt;
    };
    // Read only when this process has neither variable (sshd's sessions); unreadable: nothing.
    std::optional<std::string> container;
    if (!env("CUDA_VISIBLE_DEVICES") && !env("NVIDIA_VISIBLE_DEVICES")) {
      std::ifstream f("/proc/1/environ", std::ios::binary);
      std::string text(1U << 20, '\0');  // bounded: an environment is far smaller
      f.read(text.data(), static_cast<std::streamsize>(text.size()));
      text.resize(static_cast<std::size_t>(std::max<std::streamsize>(f.gcount(), 0)));
      container = environ_value(text, "NVIDIA_VISIBLE_DEVICES");
    }
    if (auto b = mig_slice_binding(env("CUDA_VISIBLE_DEVICES"), env("NVIDIA_VISIBLE_DEVICES"), world.local_rank(),
                                   world.local_size(), container)) {
      ::setenv("CUDA_VISIBLE_DEVICES", b->visible_devices.c_str(), 1);
      cuda_opts.mig_binding = b->rule;
    }
  } catch (const Error& e) {
    why_none = e.what();
    slices_ok = false;
  }
  const GpuscaleCudaModule* module = slices_ok ? cuda_module(&why_none) : nullptr;
  const int gpus = module ? module->visible_devices(&why_none) : 0;
  std::vector<RankGpuCount> counts;
  const auto all = world.allgather(nlohmann::json{{"gpus", gpus}, {"why", why_none}}.dump());
  for (std::size_t r = 0; r < all.size(); ++r) {
    const auto j = nlohmann::json::parse(all[r]);
    counts.push_back({static_cast<int>(r), world.hosts()[r], j["gpus"].get<int>(), j["why"].get<std::string>()});
  }
  const auto missing = ranks_without_gpus(counts);
  if (!missing) {
    *why_chosen = choice == "cuda" ? "--backend cuda" : fmt::format("auto: {} CUDA device(s) visible", gpus);
    return module->make_backend(world, cuda_opts);
  }
  if (choice == "cuda") throw Error(fmt::format("no CUDA device: {}", *missing), kExitNoDevice);
  *why_chosen = fmt::format("auto: no CUDA device ({}), using the CPU backend ({})", *missing,
                            cuda_libs::module_requirement());
#endif
  return make_cpu_backend(world, opts);
}

}  // namespace gpuscale
