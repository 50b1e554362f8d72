#pragma once
// The parameter rules of a plan point read from a file (harness/plan/plan_point_check.h) apart from the
// registry, so that the fuzz build (tests/fuzz) links them without the benchmarks, MPI or a backend.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale {

// Why `params` breaks a rule the command line applies to the same value, or nullopt: every known
// parameter's type and range (dtype and op by their parsers, sizes and counts 1 .. kMaxPointQuantity,
// ranks inside a world of `world_size`), and a GEMM shape by the --gemm-shapes parser.
std::optional<std::string> plan_point_params_problem(const nlohmann::json& params, int world_size);

}  // namespace gpuscale
