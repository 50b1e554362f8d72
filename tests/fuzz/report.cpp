// Fuzz target: gpuscale report: the analysis loader and every output format.
#include "analysis/report.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    auto run = result_from_json("fuzz.json", parse_result_text(fuzz::text_of(data, size), "fuzz.json"));
    std::vector<FileReport> files;
    files.push_back(make_file_report(std::move(run), kDefaultStragglerThreshold));
    (void)report_text(files[0]);
    (void)report_markdown(files);
    (void)report_csv(files);
    (void)report_html(files);
    (void)report_openmetrics(files);
  });
  return 0;
}
