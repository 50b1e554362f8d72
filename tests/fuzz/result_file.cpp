// Fuzz target: reading a result file (gpuscale validate; the first step of every command that reads
// one): parsing with the depth and duplicate-key checks, the schema, the rows' conversion.
#include "fuzz_input.h"
#include "results/result_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto doc = parse_result_text(fuzz::text_of(data, size), "fuzz.json");
    for (const auto& row : doc.at("results")) (void)row_key(row.get<ResultRow>());
    (void)doc.dump();
  });
  return 0;
}
