// Fuzz target: gpuscale check's reference reader, and the check of a fixed valid run against it.
#include "analysis/junit.h"
#include "analysis/reference.h"
#include "fuzz_input.h"
#include "fuzz_sample.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto ref = reference_from_json("fuzz.json", parse_json_text(fuzz::text_of(data, size), "fuzz.json"));
    const auto run = result_from_json("sample.json", fuzz::sample_result());
    const auto outcome = check_against(run, ref);
    (void)format_check(outcome);
    (void)junit_xml("check", {check_suite(outcome)});
  });
  return 0;
}
