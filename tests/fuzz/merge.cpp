// Fuzz target: gpuscale merge: the input with a fixed valid run and with itself.
#include <cstdio>

#include "analysis/merge.h"
#include "fuzz_input.h"
#include "fuzz_sample.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto doc = parse_result_text(fuzz::text_of(data, size), "fuzz.json");
    const MergeContext ctx{{"gpuscale", "merge"}, "0", "fuzz"};
    auto out = merge_results({{"fuzz.json", doc, ""}, {"sample.json", fuzz::sample_result(), ""}, {"again.json", doc, ""}}, ctx);
    // The merged document must itself be a valid result.
    if (const auto problems = validate_result_json(out.merged); !problems.empty()) {
      std::fprintf(stderr, "merge made an invalid result: %s\n", problems.c_str());
      __builtin_trap();
    }
  });
  return 0;
}
