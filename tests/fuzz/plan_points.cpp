// Fuzz target: the plan points of a resumed file (plan.point_list, or a bare array of points) checked by
// the rules the command line applies (harness/plan/plan_point_check.h, without the registry), at world sizes
// 1, 2 and 4; the check names a problem or accepts, and never throws, crashes or wraps an integer.
#include "fuzz_input.h"

#include <stdexcept>

#include "harness/plan/plan_point_params.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscale;
  const std::string text = fuzz::text_of(data, size);
  nlohmann::json doc;
  try {
    doc = parse_json_text(text, "points.json");
  } catch (const Error&) {
    return 0;
  }
  const nlohmann::json* points = &doc;
  if (doc.is_object() && doc.contains("plan") && doc["plan"].is_object() && doc["plan"].contains("point_list"))
    points = &doc["plan"]["point_list"];
  if (!points->is_array()) return 0;
  for (const auto& p : *points) {
    const nlohmann::json params = p.is_object() && p.contains("params") ? p["params"] : p;
    for (int world : {1, 2, 4}) {
      if (auto why = plan_point_params_problem(params, world))
        for (char c : *why)
          if (static_cast<unsigned char>(c) < 0x20) throw std::logic_error("a control character in a point's problem");
    }
  }
  return 0;
}
