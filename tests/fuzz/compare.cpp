// Fuzz target: gpuscale compare: the input against itself and against a fixed valid run, both ways.
#include "fuzz_input.h"
#include "fuzz_sample.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] { readers::compare(fuzz::text_of(data, size), fuzz::sample_result()); });
  return 0;
}
