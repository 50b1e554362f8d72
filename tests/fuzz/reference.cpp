// Fuzz target: gpuscale check's reference reader, and the check of a fixed valid run against it.
#include "fuzz_input.h"
#include "fuzz_sample.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] { readers::reference(fuzz::text_of(data, size), fuzz::sample_result()); });
  return 0;
}
