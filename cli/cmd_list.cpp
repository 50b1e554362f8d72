// gpuscale list: every benchmark, its parameters, unit and backends; --fields: every field of a result row;
// --dtypes: every element type.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backend.h"
#include "cli/commands.h"
#include "core/dtype.h"
#include "harness/registry.h"
#include "results/result_schema.h"
#include "results/row_fields.h"

namespace gpuscale {
namespace {

// The row-field table (results/row_fields.h) as a user reads it: where each field is, its type and unit,
// which outputs show it, what it means.
int print_row_fields(bool as_json) {
  static constexpr const char* kPlace[] = {"row", "metrics", "ranks.metrics"};
  static constexpr const char* kType[] = {"number", "integer", "text", "boolean", "object", "array", "structure"};
  static constexpr const char* kJudged[] = {"", "by unit", "higher", "lower"};
  nlohmann::json out = nlohmann::json::array();
  for (const auto& f : row_fields()) {
    nlohmann::json shown = nlohmann::json::object();
    if (!f.column.empty()) shown["table"] = f.column;
    if (!f.csv.empty()) shown["csv"] = f.csv;
    if (!f.openmetrics.empty()) shown["openmetrics"] = f.openmetrics;
    if (!f.history.empty()) shown["history"] = f.history;
    out.push_back({{"name", f.name}, {"place", kPlace[static_cast<int>(f.place)]}, {"type", kType[static_cast<int>(f.type)]},
                   {"unit", f.unit}, {"required", f.required}, {"nullable", f.nullable},
                   {"compare", kJudged[static_cast<int>(f.judged)]}, {"outputs", shown}, {"meaning", f.meaning}});
  }
  if (as_json) {
    fmt::print("{}\n", nlohmann::json{{"row_fields", out}}.dump(2));
    return 0;
  }
  fmt::print("Fields of a result row (docs/results.md); outputs: t table, c CSV, o OpenMetrics, h history\n\n");
  for (const auto& f : out) {
    const auto& o = f["outputs"];
    const std::string outputs = fmt::format("{}{}{}{}", o.contains("table") ? "t" : "-", o.contains("csv") ? "c" : "-",
                                            o.contains("openmetrics") ? "o" : "-", o.contains("history") ? "h" : "-");
    fmt::print("  {:<14} {:<20} {:<9} {:<5} {}  {}\n", f["place"].get<std::string>(), f["name"].get<std::string>(),
               f["type"].get<std::string>(), f["unit"].get<std::string>(), outputs, f["meaning"].get<std::string>());
  }
  return 0;
}

// The element-type table (core/dtype_table.def) as a user reads it: names, size, the check's tolerance
// rule, the libraries' names and which benchmark families take each type.
int print_dtypes(bool as_json) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& t : dtype_table()) {
    nlohmann::json aliases = nlohmann::json::array();
    for (auto a : t.aliases)
      if (!a.empty()) aliases.push_back(a);
    nlohmann::json uses = nlohmann::json::array();
    for (auto [bit, name] : {std::pair{kForStream, "stream"}, std::pair{kForGemm, "gemm"},
                             std::pair{kForCollectives, "collectives"}, std::pair{kForTraining, "training"}})
      if (t.uses & bit) uses.push_back(name);
    const std::string check =
        t.significand_bits > 0
            ? fmt::format("float: unit roundoff 2^-{}, smallest subnormal 2^{}", t.significand_bits, t.subnormal_exponent)
            : fmt::format("integer: exact (wraps at {} bits)", t.size * 8);
    out.push_back({{"name", t.name}, {"bytes", t.size}, {"aliases", aliases}, {"nccl_tests", t.nccl_tests},
                   {"nccl", t.nccl}, {"mpi", t.mpi.empty() ? "" : fmt::format("{}{}", t.mpi, t.mpi_reduces ? "" : " (moved only)")},
                   {"cublaslt_compute", t.cublaslt_compute}, {"check", check}, {"benchmarks", uses}});
  }
  if (as_json) {
    fmt::print("{}\n", nlohmann::json{{"dtypes", out}}.dump(2));
    return 0;
  }
  fmt::print("Element types (--dtypes; a backend measures those it has kernels for)\n\n");
  fmt::print("  {:<9} {:>5}  {:<10} {:<15} {:<26} {:<28} {}\n", "name", "bytes", "nccl-tests", "NCCL", "MPI",
             "cuBLASLt compute", "benchmarks");
  auto dash = [](const nlohmann::json& v) { return v.get<std::string>().empty() ? std::string("-") : v.get<std::string>(); };
  for (const auto& t : out) {
    std::string uses;
    for (const auto& u : t["benchmarks"]) uses += (uses.empty() ? "" : ",") + u.get<std::string>();
    fmt::print("  {:<9} {:>5}  {:<10} {:<15} {:<26} {:<28} {}\n", t["name"].get<std::string>(), t["bytes"].get<int>(),
               dash(t["nccl_tests"]), dash(t["nccl"]), dash(t["mpi"]), dash(t["cublaslt_compute"]), uses);
    std::string aliases;
    for (const auto& a : t["aliases"]) aliases += (aliases.empty() ? "" : ", ") + a.get<std::string>();
    fmt::print("            check: {}{}\n", t["check"].get<std::string>(), aliases.empty() ? "" : "; also " + aliases);
  }
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("list", "list the benchmarks, their parameters, units and backends");
  auto json = std::make_shared<bool>(false);
  auto fields = std::make_shared<bool>(false);
  auto dtypes = std::make_shared<bool>(false);
  auto schema = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "print JSON instead of text");
  auto* fields_flag =
      cmd->add_flag("--fields", *fields, "list the fields of a result row instead: place, type, unit, outputs, meaning");
  auto* dtypes_flag =
      cmd->add_flag("--dtypes", *dtypes, "list the element types instead: names, size, check rule, libraries' names, benchmarks")
          ->excludes(fields_flag);
  cmd->add_flag("--schema", *schema,
                "print the result file's JSON Schema instead, whole in one document (what gpuscale validates with; "
                "results/schema/result-v2.bundled.schema.json)")
      ->excludes(fields_flag)
      ->excludes(dtypes_flag);
  cmd->callback([&action, json, fields, dtypes, schema] {
    action = [json, fields, dtypes, schema]() -> int {
      if (*schema) {
        fmt::print("{}\n", result_schema_bundled().dump(2));
        return 0;
      }
      if (*fields) return print_row_fields(*json);
      if (*dtypes) return print_dtypes(*json);
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
