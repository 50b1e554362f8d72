// Fuzz target: reading a result file (gpuscale validate; the first step of every command that reads
// one): parsing with the depth and duplicate-key checks, the schema, the rows' conversion.
#include "fuzz_input.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpuscale::fuzz::refuse_only_with_error([&] { (void)gpuscale::readers::result_file(gpuscale::fuzz::text_of(data, size)).dump(); });
  return 0;
}
