#pragma once
// The mangled names of the twin library's own functions, from its ELF symbol table.
#include <string>
#include <unordered_map>

namespace gpuscale_emu::twins {

// Every function symbol of the library holding this code, by its address in this process. The kernels'
// host instantiations are hidden (not in the dynamic symbol table, so they cannot interpose the host
// stubs of the same names in the CUDA module, which the runtime's RTLD_GLOBAL loading would otherwise
// let them do), so dladdr cannot name them; the full symbol table (.symtab) still does, as long as the
// library is not stripped (it is a test build, never installed). Empty when the table cannot be read.
std::unordered_map<const void*, std::string> own_function_names();

}  // namespace gpuscale_emu::twins
