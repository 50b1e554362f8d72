// Reads the twin library's own .symtab (ELF-64, the only format the emulated node builds for).
#include "tests/emulated_gpu/kernels/kernel_names.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

namespace gpuscale_emu::twins {

std::unordered_map<const void*, std::string> own_function_names() {
  std::unordered_map<const void*, std::string> names;
  Dl_info info{};
  link_map* map = nullptr;
  if (dladdr1(reinterpret_cast<const void*>(&own_function_names), &info, reinterpret_cast<void**>(&map),
              RTLD_DL_LINKMAP) == 0 || map == nullptr || info.dli_fname == nullptr)
    return names;
  std::ifstream in(info.dli_fname, std::ios::binary);
  const std::vector<char> file{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (file.size() < sizeof(Elf64_Ehdr) || std::memcmp(file.data(), ELFMAG, SELFMAG) != 0) return names;
  Elf64_Ehdr eh;
  std::memcpy(&eh, file.data(), sizeof eh);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shoff + std::uint64_t{eh.e_shnum} * sizeof(Elf64_Shdr) > file.size())
    return names;
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  std::memcpy(sections.data(), file.data() + eh.e_shoff, sections.size() * sizeof(Elf64_Shdr));
  for (const Elf64_Shdr& sh : sections) {
    if (sh.sh_type != SHT_SYMTAB || sh.sh_link >= sections.size()) continue;
    const Elf64_Shdr& strtab = sections[sh.sh_link];
    if (sh.sh_offset + sh.sh_size > file.size() || strtab.sh_offset + strtab.sh_size > file.size()) return names;
    for (std::uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
      Elf64_Sym sym;
      std::memcpy(&sym, file.data() + sh.sh_offset + off, sizeof sym);
      if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_name >= strtab.sh_size) continue;
      // A shared object's symbol values are relative to where the loader put it (l_addr).
      const void* address = reinterpret_cast<const void*>(map->l_addr + sym.st_value);
      const char* name = file.data() + strtab.sh_offset + sym.st_name;
      names.emplace(address, std::string(name, strnlen(name, strtab.sh_size - sym.st_name)));
    }
  }
  return names;
}

}  // namespace gpuscale_emu::twins
