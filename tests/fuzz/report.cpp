// Fuzz target: gpuscale report: the analysis loader and every output format.
#include "fuzz_input.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  gpuscale::fuzz::refuse_only_with_error([&] { gpuscale::readers::report(gpuscale::fuzz::text_of(data, size)); });
  return 0;
}
