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

// The environment of the first python3 on $PATH: its bin/ folder's parent (none under a search root).
std::string path_python_prefix(const SearchInputs& in) {
  if (!env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT").empty()) return "";
  const std::string path = env_or_empty(in, "PATH");
  for (std::size_t start = 0; start <= path.size();) {
    const auto end = std::min(path.find(':', start), path.size());
    std::string dir = path.substr(start, end - start);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (!dir.empty() && dir.front() == '/' && contains(in.list_dir(dir), "python3")) {
      const auto slash = dir.rfind('/');
      return slash == 0 ? std::string() : dir.substr(0, slash);
    }
    start = end + 1;
  }
  return "";
}

// The lib/ directories whose python3*/ are searched for wheels, in order, without repeats.
std::vector<std::string> python_lib_dirs(const SearchInputs& in) {
  const std::string root = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT");
  std::vector<std::string> dirs;
  auto add = [&](const std::string& d) {
    if (!contains(dirs, d)) dirs.push_back(d);
  };
  for (const char* prefix : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const auto p = env_or_empty(in, prefix);
    if (!p.empty()) add(p + "/lib");
  }
  if (const auto p = path_python_prefix(in); !p.empty()) add(p + "/lib");
  const auto home = env_or_empty(in, "HOME");
  if (!home.empty() && root.empty()) add(home + "/.local/lib");
  add(root + "/opt/conda/lib");
  add(root + "/usr/local/lib");
  add(root + "/usr/lib");
  return dirs;
}

// Every site-packages folder searched, in order.
std::vector<std::string> all_site_dirs(const SearchInputs& in) {
  std::vector<std::string> out;
  for (const auto& lib_dir : python_lib_dirs(in))
    for (const auto& site : site_dirs(lib_dir, in)) out.push_back(site);
  return out;
}

// conda's lib folders (step 4).
std::vector<std::pair<std::string, std::string>> conda_dirs(const SearchInputs& in) {
  std::vector<std::pair<std::string, std::string>> out;
  if (const auto p = env_or_empty(in, "CONDA_PREFIX"); !p.empty()) out.emplace_back(p + "/lib", "$CONDA_PREFIX/lib");
  const auto opt = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT") + "/opt/conda/lib";
  if (out.empty() || out.front().first != opt) out.emplace_back(opt, "/opt/conda/lib");
  return out;
}

}  // namespace

// "13" of "libcudart.so.13".
std::string soname_major(const std::string& soname) {
  const auto at = soname.rfind(".so.");
  return at == std::string::npos ? "?" : soname.substr(at + 4);
}

std::vector<LibrarySpec> module_libraries_for(int cuda_major) {
  // CUDA 13's wheels put every toolkit library in nvidia/cu13/lib; CUDA 12's had one folder each.
  const std::string so = fmt::format(".so.{}", cuda_major), older = fmt::format(".so.{}", cuda_major - 1);
  const auto wheels = [&](const char* own) {
    return cuda_major >= 13 ? std::vector<std::string>{fmt::format("nvidia/cu{}/lib", cuda_major), own}
                            : std::vector<std::string>{own};
  };
  std::vector<std::string> nccl_wheels{"nvidia/nccl/lib"};
  if (cuda_major >= 13) nccl_wheels.push_back(fmt::format("nvidia/cu{}/lib", cuda_major));
  return {
      {"libcudart" + so, "the CUDA runtime", wheels("nvidia/cuda_runtime/lib"), "cudaRuntimeGetVersion", 0,
       "libcudart" + older},
      {"libcublasLt" + so, "cuBLASLt", wheels("nvidia/cublas/lib"), "cublasLtGetVersion", 0, "libcublasLt" + older},
      {"libnccl.so.2", "NCCL", nccl_wheels, "ncclGetVersion", nccl::version_code(nccl::kOldestMajor, nccl::kOldestMinor, 0),
       ""},
  };
}

#ifndef GPUSCALE_CUDA_RUNTIME_MAJOR
#define GPUSCALE_CUDA_RUNTIME_MAJOR 13  // a build without CUDA loads no module; the release's major
#endif

const std::vector<LibrarySpec>& module_libraries() {
  static const std::vector<LibrarySpec> libs = module_libraries_for(GPUSCALE_CUDA_RUNTIME_MAJOR);
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
  for (const auto& [dir, where] : conda_dirs(in)) add(dir + "/" + lib.soname, where);
  for (const auto& site : all_site_dirs(in)) {
    for (const auto& wheel : lib.wheel_dirs)
      add(site + "/" + wheel + "/" + lib.soname, fmt::format("Python wheels ({})", site));
    add(site + "/torch/lib/" + lib.soname, fmt::format("torch's libraries ({})", site));
  }
  return out;
}

std::vector<std::string> search_places(const SearchInputs& in) {
  const std::string root = env_or_empty(in, "GPUSCALE_CUDA_SEARCH_ROOT");
  std::vector<std::string> places;
  if (root.empty()) places.push_back("the loader path (LD_LIBRARY_PATH, RUNPATH, ld.so.cache)");
  if (const auto home = env_or_empty(in, "CUDA_HOME"); !home.empty() && home != "/usr/local/cuda")
    places.push_back(fmt::format("$CUDA_HOME ({0}/lib64, {0}/lib)", home));
  places.push_back(fmt::format("{0}/usr/local/cuda/lib64, {0}/usr/local/cuda/lib", root));
  for (const auto& [dir, where] : conda_dirs(in))
    places.push_back(where == "/opt/conda/lib" ? dir : fmt::format("{} ({})", where, dir));
  const auto sites = all_site_dirs(in);
  std::string joined;
  for (const auto& site : sites) joined += (joined.empty() ? "" : ", ") + site;
  places.push_back(sites.empty() ? std::string("no Python site-packages found for the nvidia and torch wheels")
                                 : "the nvidia and torch wheels in " + joined);
  return places;
}

std::string searched_places(const SearchInputs& in) {
  std::string out;
  for (const auto& p : search_places(in)) out += (out.empty() ? "" : "; ") + p;
  return out;
}

std::string module_requirement(int cuda_major) {
  // The oldest driver branch each runtime major runs on (NVIDIA's compatibility tables: CUDA 13.0 needs
  // 580; 12.x, by minor-version compatibility, 525).
  const char* branch = cuda_major >= 13 ? "R580" : "R525";
  const char* older = cuda_major >= 13 ? "R535, R550 and R570 nodes" : "older nodes";
  return fmt::format("the CUDA module needs libcudart.so.{} and with it an NVIDIA driver of branch {} or newer: {} "
                     "fall back to the CPU backend",
                     cuda_major, branch, older);
}

const std::string& module_requirement() {
  static const std::string text = module_requirement(GPUSCALE_CUDA_RUNTIME_MAJOR);
  return text;
}

std::string not_found(const LibrarySpec& lib, const SearchInputs& in, const std::string& older_found) {
  if (!older_found.empty())
    return fmt::format("{} ({}) not found; only {} is there ({}): this gpuscale was built with CUDA {} and needs "
                       "CUDA {}'s libraries (install them, or use a gpuscale built with that CUDA)",
                       lib.soname, lib.what, lib.older_soname, older_found, soname_major(lib.soname),
                       soname_major(lib.soname));
  return fmt::format("{} ({}) not found in {}", lib.soname, lib.what, searched_places(in));
}

std::optional<std::string> too_old(const LibrarySpec& lib, long code, const std::string& path) {
  if (lib.oldest_code <= 0 || code <= 0 || code >= lib.oldest_code) return std::nullopt;
  return fmt::format("{} ({}) {} at {} is older than {}, the oldest gpuscale runs with (put a newer one first "
                     "on LD_LIBRARY_PATH)",
                     lib.soname, lib.what, version_text(lib, code), path, version_text(lib, lib.oldest_code));
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
