// gpuscale list: every benchmark, its parameters, unit and backends.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "cli/commands.h"
#include "harness/registry.h"

namespace gpuscale {

void add_list_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("list", "list the benchmarks, their parameters, units and backends");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON instead of text");
  cmd->callback([&action, json] {
    action = [json]() -> int {
      const auto compiled = compiled_backends();
      if (*json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& b : registry().all()) {
          nlohmann::json params = nlohmann::json::array();
          for (const auto& p : b->parameters()) params.push_back({{"name", p.name}, {"description", p.description}});
          out.push_back({{"key", b->key()},
                         {"group", b->group()},
                         {"unit", b->unit()},
                         {"scope", b->scope() == Scope::independent ? "independent" : "collective"},
                         {"backends", b->backends()},
                         {"description", b->description()},
                         {"parameters", params}});
        }
        fmt::print("{}\n", nlohmann::json{{"compiled_backends", compiled}, {"benchmarks", out}}.dump(2));
        return 0;
      }
      std::string built;
      for (const auto& c : compiled) built += (built.empty() ? "" : ", ") + c;
      fmt::print("gpuscale benchmarks (backends built into this binary: {})\n", built);
      std::string last_group;
      for (const auto& b : registry().all()) {
        if (b->group() != last_group) {
          fmt::print("\n[{}]\n", b->group());
          last_group = b->group();
        }
        std::string on;
        for (const auto& x : b->backends()) on += (on.empty() ? "" : ",") + x;
        fmt::print("  {:<16} {:<8} {:<11} backends: {}\n", b->key(), b->unit(),
                   b->scope() == Scope::independent ? "independent" : "collective", on);
        fmt::print("      {}\n", b->description());
        for (const auto& p : b->parameters()) fmt::print("      - {}: {}\n", p.name, p.description);
      }
      fmt::print("\nEvery point runs at every GPU count 1, 2, 4, ..., N of the launch. Select with --benchmarks "
                 "(keys or groups).\n");
      return 0;
    };
  });
}

}  // namespace gpuscale
