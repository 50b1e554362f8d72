// The dlopen seam of the CUDA module (cuda_loader.h); every search decision is in cuda_library_plan.cpp.
#include "backends/cuda_module/cuda_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "backends/cuda_module/cuda_library_plan.h"
#include "gpuscale_version.h"

namespace gpuscale {
namespace {

#ifdef GPUSCALE_HAVE_CUDA
cuda_libs::SearchInputs real_inputs() {
  cuda_libs::SearchInputs in;
  in.env = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  in.list_dir = [](const std::string& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      names.push_back(it->path().filename().string());
    return names;
  };
  return in;
}

std::string loaded_path(void* handle, const std::string& fallback) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]) return map->l_name;
  return fallback;
}

// The version code the library reports (0: unknown).
long library_code(void* handle, const cuda_libs::LibrarySpec& lib) {
  void* sym = dlsym(handle, lib.version_symbol.c_str());
  if (!sym) return 0;
  if (lib.version_symbol == "cublasLtGetVersion") return static_cast<long>(reinterpret_cast<std::size_t (*)()>(sym)());
  int v = 0;
  return reinterpret_cast<int (*)(int*)>(sym)(&v) == 0 ? v : 0;
}

// A file of the library's previous major at one of its candidate places, or "".
std::string older_major_file(const cuda_libs::LibrarySpec& lib, const cuda_libs::SearchInputs& in) {
  if (lib.older_soname.empty()) return "";
  auto older = lib;
  older.soname = lib.older_soname;
  for (const auto& c : cuda_libs::library_candidates(older, in))
    if (c.path.front() == '/' && access(c.path.c_str(), F_OK) == 0) return c.path;
  return "";
}

// Tries every candidate in order; the first that loads stays loaded (RTLD_GLOBAL) for the module.
CudaLibraryStatus load_library(const cuda_libs::LibrarySpec& lib, const cuda_libs::SearchInputs& in) {
  CudaLibraryStatus s{lib.soname, lib.what, false, "", "", ""};
  std::string load_error;  // a file that exists but does not load says more than "not found"
  for (const auto& c : cuda_libs::library_candidates(lib, in)) {
    void* h = dlopen(c.path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (h) {
      s.path = loaded_path(h, c.path);
      const long code = library_code(h, lib);
      s.version = code > 0 ? cuda_libs::version_text(lib, code) : "";
      // Loaded and global: a later candidate would not replace it for the module, so an old one ends here.
      if (auto why = cuda_libs::too_old(lib, code, s.path)) {
        s.problem = *why;
        return s;
      }
      s.loaded = true;
      return s;
    }
    const char* err = dlerror();
    if (load_error.empty() && c.path.front() == '/' && access(c.path.c_str(), F_OK) == 0)
      load_error = fmt::format("{} ({}) cannot be loaded: {}", c.path, lib.what, err ? err : "dlopen failed");
  }
  s.problem = !load_error.empty() ? load_error : cuda_libs::not_found(lib, in, older_major_file(lib, in));
  return s;
}

CudaModuleLoad load_once() {
  CudaModuleLoad r;
  const auto in = real_inputs();
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  r.module_path = cuda_libs::module_path(in, ec ? std::string() : exe.string());
  for (const auto& lib : cuda_libs::module_libraries()) {
    r.libraries.push_back(load_library(lib, in));
    if (!r.libraries.back().loaded && r.why_not.empty()) r.why_not = r.libraries.back().problem;
  }
  if (!r.why_not.empty()) return r;
  void* h = dlopen(r.module_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* err = dlerror();
    r.why_not = fmt::format("the CUDA backend module cannot be loaded: {}", err ? err : r.module_path);
    return r;
  }
  auto entry = reinterpret_cast<const GpuscaleCudaModule* (*)()>(dlsym(h, kGpuscaleCudaModuleEntry));
  const GpuscaleCudaModule* m = entry ? entry() : nullptr;
  if (!m) {
    r.why_not = fmt::format("{} is not a gpuscale CUDA module (no {})", r.module_path, kGpuscaleCudaModuleEntry);
  } else if (std::string(m->build) != GPUSCALE_CUDA_MODULE_BUILD) {
    // Its C++ types may differ from ours: refuse rather than crash.
    r.why_not = fmt::format("the CUDA backend module {} is from another build ({}; this gpuscale is {})",
                            r.module_path, m->build, GPUSCALE_CUDA_MODULE_BUILD);
  } else {
    r.module = m;
  }
  return r;
}
#else
CudaModuleLoad load_once() {
  CudaModuleLoad r;
  r.why_not = "this gpuscale was built without the CUDA backend (configure with -DGPUSCALE_CUDA=ON)";
  return r;
}
#endif

}  // namespace

const CudaModuleLoad& load_cuda_module() {
  static const CudaModuleLoad loaded = load_once();
  return loaded;
}

const GpuscaleCudaModule* cuda_module(std::string* why_not) {
  const auto& l = load_cuda_module();
  if (!l.module && why_not) *why_not = l.why_not;
  return l.module;
}

std::vector<std::string> cuda_module_report() {
  std::vector<std::string> lines;
#ifdef GPUSCALE_HAVE_CUDA
  const auto& l = load_cuda_module();
  for (const auto& place : cuda_libs::search_places(real_inputs()))
    lines.push_back("cuda backend: searches " + place);
  for (const auto& lib : l.libraries) {
    if (lib.loaded)
      lines.push_back(fmt::format("cuda backend: {} {} ({})", lib.soname, lib.version.empty() ? "?" : lib.version,
                                  lib.path));
    else
      lines.push_back("cuda backend: " + lib.problem);  // names the library first
  }
  const bool all_loaded =
      std::all_of(l.libraries.begin(), l.libraries.end(), [](const CudaLibraryStatus& s) { return s.loaded; });
  if (l.module)
    lines.push_back(fmt::format("cuda backend: module {}", l.module_path));
  else if (all_loaded)
    lines.push_back(fmt::format("cuda backend: module {} not usable: {}", l.module_path, l.why_not));
  else
    lines.push_back(fmt::format("cuda backend: module {} not loaded (a library above is missing)", l.module_path));
#endif
  return lines;
}

}  // namespace gpuscale
