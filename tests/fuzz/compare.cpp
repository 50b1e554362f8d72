// Fuzz target: gpuscale compare: the input against itself and against a fixed valid run, both ways.
#include "analysis/compare.h"
#include "analysis/junit.h"
#include "fuzz_input.h"
#include "fuzz_sample.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto mine = result_from_json("fuzz.json", parse_result_text(fuzz::text_of(data, size), "fuzz.json"));
    const auto other = result_from_json("sample.json", fuzz::sample_result());
    for (const auto& c : {compare_results(mine, mine, 0.05), compare_results(other, mine, 0.05),
                          compare_results(mine, other, 0.05)}) {
      (void)format_comparison(c);
      (void)junit_xml("compare", {comparison_suite(c)});
    }
  });
  return 0;
}
