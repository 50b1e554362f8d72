// Fuzz target: gpuscale run --resume: the recorded options and the plan split, against the launch the
// file itself describes (so the deeper checks run) and against a fixed one.
#include "fuzz_input.h"
#include "harness/resume.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  fuzz::refuse_only_with_error([&] {
    const auto doc = parse_result_text(fuzz::text_of(data, size), "fuzz.json");
    const auto opts = adopt_recorded_options(doc, RunOptions{}, "fuzz.json");
    (void)plan_options_json(opts);
    LaunchShape own{doc.at("backend").get<std::string>(), {}, {}};
    for (const auto& r : doc.at("ranks")) {
      own.hosts.push_back(r.at("host").get<std::string>());
      own.devices.push_back(r.at("device").at("name").get<std::string>());
    }
    for (const auto& launch : {own, LaunchShape{"cpu", {"a", "a"}, {"x", "x"}}}) {
      try {
        auto plan = plan_resume(doc, launch, "fuzz.json");
        nlohmann::json rows = plan.kept_rows;
        order_rows_by_plan(rows, plan.plan.at("points"));
      } catch (const Error&) {
      }
    }
  });
  return 0;
}
