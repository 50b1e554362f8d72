// Fuzz target: gpuscale run/health --health-thresholds FILE: the strict reader (depth, so merge_patch
// cannot recurse without bound; duplicate keys; NaN), merged over the built-in rules and checked.
#include "fuzz_input.h"

#include "health/thresholds.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  const std::string text = fuzz::text_of(data, size);
  fuzz::refuse_only_with_error([&] { (void)health::parse_thresholds(text, "thresholds.json"); });
  return 0;
}
