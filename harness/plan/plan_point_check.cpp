#include "harness/plan/plan_point_check.h"
#include "harness/plan/plan_point_params.h"

#include <string_view>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"
#include "harness/benchmark.h"
#include "harness/options/options.h"
#include "harness/registry.h"

namespace gpuscale {

using json = nlohmann::json;

std::optional<std::string> plan_point_problem(const std::string& benchmark, const json& params, int world_size) {
  const Benchmark* b = registry().find(benchmark);
  if (b == nullptr) return fmt::format("no benchmark '{}'", terminal_quote(benchmark));
  if (auto why = plan_point_params_problem(params, world_size)) return why;
  try {  // the family's own parser: what it needs is there, with the types it reads
    RunOptions opts;
    b->demand(params, DemandContext{opts, "cpu", world_size});
  } catch (const json::out_of_range& e) {
    const std::string what = e.what();  // "[json.exception.out_of_range.403] key 'elements' not found"
    const auto q = what.find("key '");
    if (e.id == 403 && q != std::string::npos)
      return fmt::format("parameter '{}' is missing", terminal_safe(what.substr(q + 5, what.find('\'', q + 5) - q - 5)));
    return std::string("a parameter is out of range");
  } catch (const json::exception&) {
    return std::string("a parameter has the wrong type");
  } catch (const std::exception& e) {
    return terminal_safe(e.what());
  }
  return std::nullopt;
}

void check_resumed_points(const json& points, int world_size, const std::string& file) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto benchmark = points[i].at("benchmark").get<std::string>();
    if (auto why = plan_point_problem(benchmark, points[i].at("params"), world_size))
      throw Error(fmt::format("--resume {}: plan.point_list[{}] ({}): {}", terminal_safe(file), i,
                              terminal_quote(benchmark), *why));
  }
}

}  // namespace gpuscale
