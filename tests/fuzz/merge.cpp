// Fuzz target: gpuscale merge: the input with a fixed valid run and with itself. The merged document
// must itself be a valid result.
#include <cstdio>

#include "fuzz_input.h"
#include "fuzz_sample.h"
#include "readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto merged = readers::merge(fuzz::text_of(data, size), fuzz::sample_result());
    if (const auto problems = validate_result_json(merged); !problems.empty()) {
      std::fprintf(stderr, "merge made an invalid result: %s\n", problems.c_str());
      __builtin_trap();
    }
  });
  return 0;
}
