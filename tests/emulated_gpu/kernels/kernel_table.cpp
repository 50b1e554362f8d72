// find_kernel_twin: the table of every twin, named on first use.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include "tests/emulated_gpu/kernels/kernel_names.h"
#include "tests/emulated_gpu/kernels/kernel_runner.h"
#include "tests/emulated_gpu/kernels/kernel_twin.h"

namespace gpuscale_emu {
namespace {

// Every twin once, by name. A kernel the table cannot name stops the process: a twin no launch can
// find would hide a kernel that then fails as "no twin" with no clue why.
std::unordered_map<std::string, KernelTwin> build_table() {
  std::vector<twins::TwinEntry> entries;
  twins::add_stream_twins(entries);
  twins::add_stream_sum_twins(entries);
  twins::add_copy_twins(entries);
  twins::add_gemm_twins(entries);
  twins::add_collective_twins(entries);
  twins::add_dp_twins(entries);
  const auto names = twins::own_function_names();
  std::unordered_map<std::string, KernelTwin> table;
  for (const auto& e : entries) {
    const auto it = names.find(e.kernel);
    if (it == names.end()) {
      std::fprintf(stderr, "emulated GPU: a kernel twin has no name in the twin library's symbol table "
                           "(is libgpuscale-emulated-kernels.so stripped?)\n");
      std::abort();
    }
    KernelTwin twin = e.twin;
    table.emplace(it->second, twin);  // a storage type two dtypes share comes twice: kept once
  }
  for (auto& [name, twin] : table) twin.name = name.c_str();
  return table;
}

const std::unordered_map<std::string, KernelTwin>& table() {
  static const std::unordered_map<std::string, KernelTwin> t = build_table();
  return t;
}

}  // namespace

const KernelTwin* find_kernel_twin(const char* mangled_name) {
  if (mangled_name == nullptr) return nullptr;
  const auto it = table().find(mangled_name);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<const KernelTwin*> all_kernel_twins() {
  std::vector<const KernelTwin*> all;
  for (const auto& [name, twin] : table()) all.push_back(&twin);
  return all;
}

}  // namespace gpuscale_emu
