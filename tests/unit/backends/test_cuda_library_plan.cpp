// Where the CUDA backend's libraries and module are looked for (backends/cuda_module/cuda_library_plan.h):
// a fake environment and a fake file tree, with random directory names so nothing passes by accident.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "test_seed.h"
#include "backends/cuda_module/cuda_library_plan.h"

using namespace gpuscale::cuda_libs;

namespace {

class FakeMachine {
 public:
  std::map<std::string, std::string> env;
  std::set<std::string> dirs;  // every directory that exists, absolute

  void mkdir(const std::string& path) {
    for (std::size_t i = 1; i <= path.size(); ++i)
      if (i == path.size() || path[i] == '/') dirs.insert(path.substr(0, i));
  }
  SearchInputs inputs() const {
    SearchInputs in;
    in.env = [this](const std::string& name) -> std::optional<std::string> {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    in.list_dir = [this](const std::string& dir) {
      std::vector<std::string> names;
      const std::string prefix = dir + "/";
      for (const auto& d : dirs)
        if (d.rfind(prefix, 0) == 0 && d.find('/', prefix.size()) == std::string::npos)
          names.push_back(d.substr(prefix.size()));
      return names;
    };
    return in;
  }
};

std::string random_name(std::mt19937_64& rng) {
  std::string s = "d";
  for (int i = 0; i < 8; ++i) s += static_cast<char>('a' + rng() % 26);
  return s;
}

const LibrarySpec& lib(const std::string& soname) {
  for (const auto& l : module_libraries())
    if (l.soname == soname) return l;
  throw std::runtime_error("no such library " + soname);
}

std::vector<std::string> paths(const std::vector<Candidate>& cs) {
  std::vector<std::string> out;
  for (const auto& c : cs) out.push_back(c.path);
  return out;
}

}  // namespace

TEST(CudaLibraryPlan, TheModuleNeedsCudartCublasLtAndNccl) {
  std::vector<std::string> names;
  for (const auto& l : module_libraries()) names.push_back(l.soname);
  EXPECT_EQ(names, (std::vector<std::string>{"libcudart.so.13", "libcublasLt.so.13", "libnccl.so.2"}));
}

// A module built with CUDA 12.x links libcudart.so.12 and libcublasLt.so.12: the loader looks for those
// (CUDA 12's wheels have a folder per library, no nvidia/cu13), and names 11's as the wrong ones.
TEST(CudaLibraryPlan, TheSonamesFollowTheCudaMajorTheModuleWasBuiltWith) {
  const auto twelve = module_libraries_for(12);
  ASSERT_EQ(twelve.size(), 3u);
  EXPECT_EQ(twelve[0].soname, "libcudart.so.12");
  EXPECT_EQ(twelve[0].older_soname, "libcudart.so.11");
  EXPECT_EQ(twelve[0].wheel_dirs, (std::vector<std::string>{"nvidia/cuda_runtime/lib"}));
  EXPECT_EQ(twelve[1].soname, "libcublasLt.so.12");
  EXPECT_EQ(twelve[1].wheel_dirs, (std::vector<std::string>{"nvidia/cublas/lib"}));
  EXPECT_EQ(twelve[2].soname, "libnccl.so.2");
  const auto thirteen = module_libraries_for(13);
  EXPECT_EQ(thirteen[0].soname, "libcudart.so.13");
  EXPECT_EQ(thirteen[0].older_soname, "libcudart.so.12");
  EXPECT_EQ(thirteen[1].wheel_dirs, (std::vector<std::string>{"nvidia/cu13/lib", "nvidia/cublas/lib"}));
}

TEST(CudaLibraryPlan, TheFallbackSaysWhatTheModuleNeeds) {
  const auto r13 = module_requirement(13);
  EXPECT_NE(r13.find("libcudart.so.13"), std::string::npos) << r13;
  EXPECT_NE(r13.find("R580 or newer"), std::string::npos) << r13;
  EXPECT_NE(r13.find("R535, R550 and R570 nodes fall back to the CPU backend"), std::string::npos) << r13;
  EXPECT_NE(module_requirement(12).find("libcudart.so.12"), std::string::npos);
  EXPECT_EQ(soname_major("libcudart.so.12"), "12");
  // A CUDA 12 build over CUDA 11's runtime names 12, not 13.
  const auto twelve = module_libraries_for(12);
  FakeMachine m;
  const auto text = not_found(twelve[0], m.inputs(), "/usr/lib/libcudart.so.11");
  EXPECT_NE(text.find("built with CUDA 12 and needs CUDA 12's libraries"), std::string::npos) << text;
}

TEST(CudaLibraryPlan, LoaderFirstThenCudaHomeThenUsrLocalCuda) {
  std::mt19937_64 rng(test_seed());
  FakeMachine m;
  const std::string home = "/opt/" + random_name(rng);
  m.env["CUDA_HOME"] = home;
  const auto got = paths(library_candidates(lib("libcudart.so.13"), m.inputs()));
  const std::vector<std::string> want = {"libcudart.so.13", home + "/lib64/libcudart.so.13", home + "/lib/libcudart.so.13",
                                         "/usr/local/cuda/lib64/libcudart.so.13", "/usr/local/cuda/lib/libcudart.so.13",
                                         "/opt/conda/lib/libcudart.so.13"};
  EXPECT_EQ(got, want);
}

TEST(CudaLibraryPlan, NoCudaHomeNoDuplicates) {
  FakeMachine m;
  auto got = paths(library_candidates(lib("libnccl.so.2"), m.inputs()));
  EXPECT_EQ(got, (std::vector<std::string>{"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2",
                                           "/usr/local/cuda/lib/libnccl.so.2", "/opt/conda/lib/libnccl.so.2"}));
  m.env["CUDA_HOME"] = "/usr/local/cuda";  // the same directories are tried once
  EXPECT_EQ(paths(library_candidates(lib("libnccl.so.2"), m.inputs())), got);
}

TEST(CudaLibraryPlan, PythonWheelsOfEveryEnvironmentNewestPythonFirst) {
  std::mt19937_64 rng(test_seed());
  FakeMachine m;
  const std::string venv = "/" + random_name(rng) + "/venv", conda = "/" + random_name(rng) + "/conda";
  m.env["VIRTUAL_ENV"] = venv;
  m.env["CONDA_PREFIX"] = conda;
  m.mkdir(venv + "/lib/python3.12/site-packages");
  m.mkdir(conda + "/lib/python3.9/site-packages");
  m.mkdir(conda + "/lib/python3.11/site-packages");
  m.mkdir(conda + "/lib/pythonX/site-packages");        // not a Python 3 directory: skipped
  m.mkdir("/usr/local/lib/python3.11/dist-packages");
  m.mkdir("/usr/lib/python3/dist-packages");            // Debian's version-less directory
  m.mkdir("/usr/lib/python3.11");                       // no site-packages in it: nothing to try
  const auto got = library_candidates(lib("libnccl.so.2"), m.inputs());
  std::vector<std::string> wheels;
  for (const auto& c : got)
    if (c.where.rfind("Python wheels", 0) == 0) wheels.push_back(c.path);
  const std::vector<std::string> sites = {venv + "/lib/python3.12/site-packages", conda + "/lib/python3.11/site-packages",
                                          conda + "/lib/python3.9/site-packages",
                                          "/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages"};
  std::vector<std::string> want;
  for (const auto& s : sites)
    for (const char* w : {"/nvidia/nccl/lib/libnccl.so.2", "/nvidia/cu13/lib/libnccl.so.2"}) want.push_back(s + w);
  EXPECT_EQ(wheels, want);
  // The wheels come after every fixed directory, conda's own lib folders last among those; torch's own
  // folder follows each site's wheels.
  EXPECT_EQ(got.front().path, "libnccl.so.2");
  EXPECT_EQ(got[2].path, "/usr/local/cuda/lib/libnccl.so.2");
  EXPECT_EQ(got[3].path, conda + "/lib/libnccl.so.2");
  EXPECT_EQ(got[4].path, "/opt/conda/lib/libnccl.so.2");
  EXPECT_EQ(got[7].path, sites[0] + "/torch/lib/libnccl.so.2");
  EXPECT_EQ(got[7].where, "torch's libraries (" + sites[0] + ")");
}

TEST(CudaLibraryPlan, EachLibraryHasItsWheelFolder) {
  FakeMachine m;
  m.mkdir("/usr/lib/python3.10/site-packages");
  const std::map<std::string, std::string> folder = {{"libcudart.so.13", "nvidia/cuda_runtime/lib"},
                                                     {"libcublasLt.so.13", "nvidia/cublas/lib"},
                                                     {"libnccl.so.2", "nvidia/nccl/lib"}};
  for (const auto& [soname, dir] : folder) {
    const auto got = paths(library_candidates(lib(soname), m.inputs()));
    const auto want = "/usr/lib/python3.10/site-packages/" + dir + "/" + soname;
    EXPECT_NE(std::find(got.begin(), got.end(), want), got.end()) << soname;
  }
}

TEST(CudaLibraryPlan, SearchRootHidesTheMachineAndSkipsTheLoader) {
  std::mt19937_64 rng(test_seed());
  FakeMachine m;
  const std::string root = "/tmp/" + random_name(rng);
  m.env["GPUSCALE_CUDA_SEARCH_ROOT"] = root;
  m.env["HOME"] = "/root";
  m.mkdir("/root/.local/lib/python3.11/site-packages");  // outside the root: not searched
  m.mkdir("/usr/lib/python3.11/site-packages");          // outside the root: not searched
  m.mkdir(root + "/usr/lib/python3.11/site-packages");
  m.env["PATH"] = "/venv/bin";  // a python3 on PATH is the machine's: not searched either
  m.mkdir("/venv/bin/python3");
  m.mkdir("/venv/lib/python3.11/site-packages");
  const auto got = paths(library_candidates(lib("libcudart.so.13"), m.inputs()));
  const std::string site = root + "/usr/lib/python3.11/site-packages/";
  EXPECT_EQ(got, (std::vector<std::string>{root + "/usr/local/cuda/lib64/libcudart.so.13",
                                           root + "/usr/local/cuda/lib/libcudart.so.13",
                                           root + "/opt/conda/lib/libcudart.so.13",
                                           site + "nvidia/cu13/lib/libcudart.so.13",
                                           site + "nvidia/cuda_runtime/lib/libcudart.so.13",
                                           site + "torch/lib/libcudart.so.13"}));
  EXPECT_EQ(searched_places(m.inputs()),
            fmt::format("{0}/usr/local/cuda/lib64, {0}/usr/local/cuda/lib; {0}/opt/conda/lib; the nvidia and torch "
                        "wheels in {0}/usr/lib/python3.11/site-packages",
                        root));
}

TEST(CudaLibraryPlan, HomeLocalPipBeforeTheSystem) {
  FakeMachine m;
  m.env["HOME"] = "/home/u";
  m.mkdir("/home/u/.local/lib/python3.11/site-packages");
  m.mkdir("/usr/lib/python3.11/dist-packages");
  std::vector<std::string> wheels;
  for (const auto& c : library_candidates(lib("libcublasLt.so.13"), m.inputs()))
    if (c.where.rfind("Python wheels", 0) == 0) wheels.push_back(c.path);
  ASSERT_EQ(wheels.size(), 4u);
  EXPECT_EQ(wheels[0], "/home/u/.local/lib/python3.11/site-packages/nvidia/cu13/lib/libcublasLt.so.13");
  EXPECT_EQ(wheels[3], "/usr/lib/python3.11/dist-packages/nvidia/cublas/lib/libcublasLt.so.13");
}

TEST(CudaLibraryPlan, SearchedPlacesNameWhatWasSearched) {
  FakeMachine m;
  EXPECT_EQ(search_places(m.inputs()),
            (std::vector<std::string>{"the loader path (LD_LIBRARY_PATH, RUNPATH, ld.so.cache)",
                                      "/usr/local/cuda/lib64, /usr/local/cuda/lib", "/opt/conda/lib",
                                      "no Python site-packages found for the nvidia and torch wheels"}));
  m.env["CUDA_HOME"] = "/x";
  m.env["CONDA_PREFIX"] = "/c";
  m.mkdir("/c/lib/python3.12/site-packages");
  m.mkdir("/usr/lib/python3/dist-packages");
  EXPECT_EQ(search_places(m.inputs()),
            (std::vector<std::string>{"the loader path (LD_LIBRARY_PATH, RUNPATH, ld.so.cache)",
                                      "$CUDA_HOME (/x/lib64, /x/lib)", "/usr/local/cuda/lib64, /usr/local/cuda/lib",
                                      "$CONDA_PREFIX/lib (/c/lib)", "/opt/conda/lib",
                                      "the nvidia and torch wheels in /c/lib/python3.12/site-packages, "
                                      "/usr/lib/python3/dist-packages"}));
  const std::string joined = searched_places(m.inputs());
  EXPECT_EQ(joined.rfind("the loader path (", 0), 0u);
  EXPECT_NE(joined.find("; $CUDA_HOME (/x/lib64, /x/lib); "), std::string::npos) << joined;
}

TEST(CudaLibraryPlan, TheEnvironmentOfThePython3OnPathIsSearchedUnactivated) {
  std::mt19937_64 rng(test_seed());
  FakeMachine m;
  const std::string venv = "/" + random_name(rng) + "/env";
  m.env["PATH"] = "/nothing/here:" + venv + "/bin/:/usr/bin";  // the first python3 wins, a trailing slash too
  m.mkdir(venv + "/bin/python3");
  m.mkdir("/usr/bin/python3");
  m.mkdir(venv + "/lib/python3.12/site-packages");
  m.mkdir("/usr/lib/python3/dist-packages");
  std::vector<std::string> wheels;
  for (const auto& c : library_candidates(lib("libnccl.so.2"), m.inputs()))
    if (c.where.rfind("Python wheels", 0) == 0) wheels.push_back(c.path);
  ASSERT_EQ(wheels.size(), 4u);
  EXPECT_EQ(wheels[0], venv + "/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2");
  EXPECT_EQ(wheels[2], "/usr/lib/python3/dist-packages/nvidia/nccl/lib/libnccl.so.2");
  m.env["PATH"] = "relative/bin";  // a relative PATH entry is not a place
  m.mkdir("relative/bin/python3");
  for (const auto& c : library_candidates(lib("libnccl.so.2"), m.inputs()))
    EXPECT_EQ(c.path.find("relative"), std::string::npos) << c.path;
}

TEST(CudaLibraryPlan, OnlyNcclHasAFloorAndOldOnesAreRefusedByName) {
  const auto& nccl = lib("libnccl.so.2");
  EXPECT_FALSE(too_old(nccl, 21800, "/x/libnccl.so.2"));
  EXPECT_FALSE(too_old(nccl, 22809, "/x/libnccl.so.2"));
  EXPECT_FALSE(too_old(nccl, 0, "/x/libnccl.so.2")) << "an unknown version is not refused";
  const auto old = too_old(nccl, 21705, "/x/libnccl.so.2");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->rfind("libnccl.so.2 (NCCL) 2.17.5 at /x/libnccl.so.2 is older than 2.18.0, ", 0), 0u) << *old;
  EXPECT_FALSE(too_old(lib("libcudart.so.13"), 13000, "/x")) << "its soname fixes the major";
}

TEST(CudaLibraryPlan, TheRuntimeOfTheWrongCudaIsNamedNotMissing) {
  FakeMachine m;
  const auto& cudart = lib("libcudart.so.13");
  EXPECT_EQ(cudart.older_soname, "libcudart.so.12");
  const auto said = not_found(cudart, m.inputs(), "/usr/local/cuda/lib64/libcudart.so.12");
  EXPECT_EQ(said.rfind("libcudart.so.13 (the CUDA runtime) not found; only libcudart.so.12 is there "
                       "(/usr/local/cuda/lib64/libcudart.so.12): this gpuscale was built with CUDA 13",
                       0),
            0u)
      << said;
  EXPECT_EQ(not_found(cudart, m.inputs(), ""), "libcudart.so.13 (the CUDA runtime) not found in " + searched_places(m.inputs()));
}

TEST(CudaLibraryPlan, VersionCodesAsText) {
  std::mt19937_64 rng(test_seed());
  const int minor = static_cast<int>(rng() % 9), patch = static_cast<int>(rng() % 99);
  EXPECT_EQ(version_text(lib("libcudart.so.13"), 13000 + minor * 10), "13." + std::to_string(minor));
  EXPECT_EQ(version_text(lib("libcublasLt.so.13"), 130000 + minor * 100 + patch),
            "13." + std::to_string(minor) + "." + std::to_string(patch));
  EXPECT_EQ(version_text(lib("libnccl.so.2"), 22800 + patch % 10), "2.28." + std::to_string(patch % 10));
}

TEST(CudaLibraryPlan, ModuleNextToTheExecutableOrFromTheEnvironment) {
  std::mt19937_64 rng(test_seed());
  FakeMachine m;
  const std::string prefix = "/" + random_name(rng);
  EXPECT_EQ(module_path(m.inputs(), prefix + "/bin/gpuscale"), prefix + "/bin/../lib/gpuscale/libgpuscale-cuda.so");
  m.env["GPUSCALE_CUDA_MODULE"] = prefix + "/x.so";
  EXPECT_EQ(module_path(m.inputs(), "/usr/bin/gpuscale"), prefix + "/x.so");
  m.env["GPUSCALE_CUDA_MODULE"] = "";  // empty: as if unset
  EXPECT_EQ(module_path(m.inputs(), "/usr/bin/gpuscale"), "/usr/bin/../lib/gpuscale/libgpuscale-cuda.so");
}
