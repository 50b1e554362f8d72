#pragma once
// Where the CUDA backend's libraries are looked for before its module (libgpuscale-cuda.so) is loaded,
// as pure decisions: given the environment and a directory lister, the candidate files in the order
// they are tried. The dlopen calls are in cuda_loader.cpp; this is what the unit tests check.
//
// The order, for each library (cudart, cuBLASLt, NCCL):
//   1. the soname alone: whatever the loader finds (LD_LIBRARY_PATH, RUNPATH, ld.so.cache);
//   2. $CUDA_HOME/lib64, $CUDA_HOME/lib;
//   3. /usr/local/cuda/lib64, /usr/local/cuda/lib;
//   4. conda's own lib folders, where conda packages put the libraries: $CONDA_PREFIX/lib, /opt/conda/lib;
//   5. Python's site-packages / dist-packages, newest Python first, of $VIRTUAL_ENV, $CONDA_PREFIX, the
//      environment of the first python3 on $PATH (an unactivated virtual environment used by its full
//      path), ~/.local, /opt/conda, /usr/local and /usr: in each, the pip wheels' layout
//      (nvidia/{cuda_runtime,cublas,nccl}/lib, CUDA 13's nvidia/cu13/lib, as PyTorch images carry them)
//      and torch's own torch/lib.
// GPUSCALE_CUDA_SEARCH_ROOT=DIR (for tests) looks for the fixed system directories of 3 to 5 under DIR
// and skips step 1, $HOME and $PATH, so a test can hide or stage the libraries of a machine that has
// them.
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpuscale::cuda_libs {

struct LibrarySpec {
  std::string soname;                   // "libcudart.so.13"
  std::string what;                     // "the CUDA runtime"
  std::vector<std::string> wheel_dirs;  // under site-packages: "nvidia/cuda_runtime/lib", ...
  std::string version_symbol;           // the C function that gives its version
  long oldest_code = 0;                 // the oldest version (as version_symbol gives it) the module runs with; 0: any
  std::string older_soname;             // the previous major's soname ("libcudart.so.12"), to say it is the wrong one
};

// The libraries a module built against CUDA `cuda_major` needs, in the order they are loaded: its
// runtime and cuBLASLt by that major's sonames (the module's NEEDED entries: a build with CUDA 12.x
// links libcudart.so.12, with 13.x libcudart.so.13), then NCCL.
std::vector<LibrarySpec> module_libraries_for(int cuda_major);
// Those of this build's module (GPUSCALE_CUDA_RUNTIME_MAJOR, from the toolkit CMake found; 13 when
// the build has no CUDA).
const std::vector<LibrarySpec>& module_libraries();
// What the module asks of a node, said where `auto` falls back to the CPU backend: the runtime's
// soname and the oldest driver branch that runs it ("... libcudart.so.13 ... R580 or newer ...").
std::string module_requirement(int cuda_major);
const std::string& module_requirement();  // this build's
std::string soname_major(const std::string& soname);  // "13" of "libcudart.so.13"

struct SearchInputs {
  std::function<std::optional<std::string>(const std::string&)> env;  // getenv
  std::function<std::vector<std::string>(const std::string&)> list_dir;  // entry names; empty when none
};

struct Candidate {
  std::string path;   // the soname alone (loader search) or an absolute path
  std::string where;  // "the loader path", "$CUDA_HOME", "/usr/local/cuda", "Python wheels (<site-packages>)"
};

std::vector<Candidate> library_candidates(const LibrarySpec& lib, const SearchInputs& in);

// The places searched, one entry each (`gpuscale --version` lists them), and joined for the message
// when a library is in none of them.
std::vector<std::string> search_places(const SearchInputs& in);
std::string searched_places(const SearchInputs& in);

// What to say when `lib` is found nowhere. `older_found`: a file of its previous major (older_soname)
// found at one of the candidate places, or empty: a CUDA-13 build over CUDA 12's libraries is named as
// exactly that, not as "not found".
std::string not_found(const LibrarySpec& lib, const SearchInputs& in, const std::string& older_found);

// Why the library loaded from `path`, of version `code`, cannot serve the module; nullopt when it can
// (also when its version is unknown: code <= 0).
std::optional<std::string> too_old(const LibrarySpec& lib, long code, const std::string& path);

// Version codes as the libraries report them, as text: cudaRuntimeGetVersion 13000 -> "13.0",
// cublasLtGetVersion 130100 -> "13.1.0", ncclGetVersion 22803 -> "2.28.3".
std::string version_text(const LibrarySpec& lib, long code);

// The module's file: $GPUSCALE_CUDA_MODULE when set, else <dir of the executable>/../lib/gpuscale/.
std::string module_path(const SearchInputs& in, const std::string& exe_path);

}  // namespace gpuscale::cuda_libs
