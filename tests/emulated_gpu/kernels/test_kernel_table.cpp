// The twin table against the CUDA module it stands in for: every kernel the built module registers
// with the runtime has a twin (so a new kernel, or a new storage type in core/dtype_table.def, cannot
// go unnoticed), and every twin is one of them. The names are what nvcc's registration code passes to
// __cudaRegisterFunction as the kernel's device name: the stringified mangled name, a string constant
// of the module's host code (crt/host_runtime.h, __cudaRegisterEntry), read here from its .rodata.
#include <elf.h>

#include <cctype>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "tests/emulated_gpu/kernels/twin_test_support.h"

namespace gpuscale_emu::test {
namespace {

// The NUL-terminated strings starting "_Z" in the ELF-64 file's .rodata.
std::set<std::string> mangled_strings_in_rodata(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> f{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::set<std::string> names;
  if (f.size() < sizeof(Elf64_Ehdr)) return names;
  Elf64_Ehdr eh;
  std::memcpy(&eh, f.data(), sizeof eh);
  if (eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > f.size() || eh.e_shstrndx >= eh.e_shnum) return names;
  std::vector<Elf64_Shdr> sh(eh.e_shnum);
  std::memcpy(sh.data(), f.data() + eh.e_shoff, sh.size() * sizeof(Elf64_Shdr));
  const Elf64_Shdr& shstr = sh[eh.e_shstrndx];
  for (const Elf64_Shdr& s : sh) {
    if (shstr.sh_offset + s.sh_name >= f.size() || std::strcmp(f.data() + shstr.sh_offset + s.sh_name, ".rodata") != 0)
      continue;
    if (s.sh_offset + s.sh_size > f.size()) return names;
    // Runs of identifier characters ended by a NUL: a string constant need not start right after
    // another one's NUL (constants are aligned and packed with other data).
    const char* p = f.data() + s.sh_offset;
    const char* end = p + s.sh_size;
    std::string run;
    for (; p < end; ++p) {
      const char ch = *p;
      if (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') {
        run += ch;
        continue;
      }
      if (ch == '\0' && run.size() > 2 && run.rfind("_Z", 0) == 0) names.insert(run);
      run.clear();
    }
  }
  return names;
}

TEST(KernelTable, EveryKernelOfTheCudaModuleHasATwinAndNoTwinIsStale) {
  const std::set<std::string> module = mangled_strings_in_rodata(GPUSCALE_CUDA_MODULE);
  ASSERT_GE(module.size(), 13u) << GPUSCALE_CUDA_MODULE << ": fewer registered kernels than the 13 __global__ functions";
  for (const std::string& name : module)
    EXPECT_NE(find_kernel_twin(name.c_str()), nullptr) << "no twin for the module's kernel " << demangled(name.c_str());
  for (const KernelTwin* t : all_kernel_twins())
    EXPECT_EQ(module.count(t->name), 1u) << "a twin of no kernel in the module: " << demangled(t->name);
  EXPECT_EQ(all_kernel_twins().size(), module.size());
}

TEST(KernelTable, UnknownNamesHaveNoTwin) {
  EXPECT_EQ(find_kernel_twin(nullptr), nullptr);
  EXPECT_EQ(find_kernel_twin("_Z6kernelPf"), nullptr);
  EXPECT_EQ(find_kernel_twin(""), nullptr);
}

TEST(KernelTable, EachTwinIsFoundByItsOwnNameAndHasItsParts) {
  for (const KernelTwin* t : all_kernel_twins()) {
    ASSERT_NE(t->name, nullptr);
    EXPECT_EQ(find_kernel_twin(t->name), t);
    EXPECT_NE(t->run, nullptr) << t->name;
    EXPECT_NE(t->bytes_moved, nullptr) << t->name;
    EXPECT_EQ(std::string(t->name).rfind("_ZN8gpuscale", 0), 0u) << t->name;
  }
}

}  // namespace
}  // namespace gpuscale_emu::test
