// The CUDA libraries' search order (cuda_library_plan.h): pure, so the unit tests set every case.
#include "backends/cuda_module/cuda_library_plan.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "collectives/nccl/nccl_plan.h"

namespace gpuscale::cuda_libs {
namespace {

// "python3.12" -> 12, "python3" -> -1 (Debian's version-less dist-packages), not Python -> nullopt.
std::optional<int> python_minor(const std::string& name) {
  if (name.rfind("python3", 0) != 0) return std::nullopt;
  const std::string rest = name.substr(7);
  if (rest.empty()) return -1;
  if (rest.size() < 2 || rest[0] != '.') return std::nullopt;
  for (std::size_t i = 1; i < rest.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(rest[i]))) return std::nullopt;
  return std::stoi(rest.substr(1));
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// Every site-packages / dist-packages directory under lib_dir/python3*, newest Python first.
std::vector<std::string> site_dirs(const std::string& lib_dir, const SearchInputs& in) {
  std::vector<std::pair<int, std::string>> pythons;
  for (const auto& name : in.list_dir(lib_dir))
    if (auto minor = python_minor(name)) pythons.emplace_back(*minor, name);
  std::sort(pythons.begin(), pythons.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> out;
  for (const auto& [minor, name] : pythons) {
    const auto entries = in.list_dir(lib_dir + "/" + name);
    for (const char* sub : {"site-packages", "dist-packages"})
      if (contains(entries, sub)) out.push_back(lib_dir + "/" + name + "/" + sub);
  }
  return out;
}

std::string env_or_empty(const SearchInputs& in, const std::string& name) {
  auto v = in.env(name);
  return v ? *v : std::string();
}

// The lib/ directories whose python3*/ are searched for wheels, in order.
std::vector<std::string> python_lib_dirs(const SearchInputs& in) {
  const std::string root = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT");
  std::vector<std::string> dirs;
  for (const char* prefix : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const auto p = env_or_empty(in, prefix);
    if (!p.empty()) dirs.push_back(p + "/lib");
  }
  const auto home = env_or_empty(in, "HOME");
  if (!home.empty() && root.empty()) dirs.push_back(home + "/.local/lib");
  dirs.push_back(root + "/usr/local/lib");
  dirs.push_back(root + "/usr/lib");
  return dirs;
}

}  // namespace

const std::vector<LibrarySpec>& module_libraries() {
  // CUDA 13's wheels put every toolkit library in nvidia/cu13/lib; CUDA 12's had one folder each.
  static const std::vector<LibrarySpec> libs = {
      {"libcudart.so.13", "the CUDA runtime", {"nvidia/cu13/lib", "nvidia/cuda_runtime/lib"}, "cudaRuntimeGetVersion"},
      {"libcublasLt.so.13", "cuBLASLt", {"nvidia/cu13/lib", "nvidia/cublas/lib"}, "cublasLtGetVersion"},
      {"libnccl.so.2", "NCCL", {"nvidia/nccl/lib", "nvidia/cu13/lib"}, "ncclGetVersion"},
  };
  return libs;
}

std::vector<Candidate> library_candidates(const LibrarySpec& lib, const SearchInputs& in) {
  std::vector<Candidate> out;
  std::set<std::string> seen;
  auto add = [&](const std::string& path, const std::string& where) {
    if (seen.insert(path).second) out.push_back({path, where});
  };
  const std::string root = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT");
  if (root.empty()) add(lib.soname, "the loader path");
  const auto cuda_home = env_or_empty(in, "CUDA_HOME");
  if (!cuda_home.empty())
    for (const char* sub : {"/lib64/", "/lib/"}) add(cuda_home + sub + lib.soname, "$CUDA_HOME");
  for (const char* sub : {"/usr/local/cuda/lib64/", "/usr/local/cuda/lib/"}) add(root + sub + lib.soname, "/usr/local/cuda");
  for (const auto& lib_dir : python_lib_dirs(in))
    for (const auto& site : site_dirs(lib_dir, in))
      for (const auto& wheel : lib.wheel_dirs)
        add(site + "/" + wheel + "/" + lib.soname, fmt::format("Python wheels ({})", site));
  return out;
}

std::string searched_places(const SearchInputs& in) {
  const std::string root = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT");
  std::string places = root.empty() ? "the loader path, " : "";
  places += env_or_empty(in, "CUDA_HOME").empty() ? "" : "$CUDA_HOME, ";
  places += root + "/usr/local/cuda and Python's nvidia wheels";
  return places;
}

std::string version_text(const LibrarySpec& lib, long code) {
  if (lib.version_symbol == "ncclGetVersion") return nccl::version_text(static_cast<int>(code));
  if (lib.version_symbol == "cudaRuntimeGetVersion") return fmt::format("{}.{}", code / 1000, (code % 1000) / 10);
  return fmt::format("{}.{}.{}", code / 10000, (code % 10000) / 100, code % 100);
}

std::string module_path(const SearchInputs& in, const std::string& exe_path) {
  if (auto m = in.env("GPUSCALE_CUDA_MODULE"); m && !m->empty()) return *m;
  const auto slash = exe_path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : exe_path.substr(0, slash);
  return dir + "/../lib/gpuscale/libgpuscale-cuda.so";
}

}  // namespace gpuscale::cuda_libs
