#pragma once
// A plan point read from a file (`--resume`'s plan.point_list) checked by the rules the command line
// applies to the same values, before anything is measured: a file is data, and a point the CLI could
// never have planned (op "xor", a GEMM of m = 0, a size of -5 read as 2^64 - 5) must be one clear line,
// not a crash or a wrapped integer. Pure: unit-tested without MPI.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale {

// The largest byte size or element count a point may hold (2^62: products with an element size stay
// inside 64 bits).
inline constexpr std::uint64_t kMaxPointQuantity = 1ULL << 62;

// Why the point {benchmark, params} cannot be measured by a world of `world_size` ranks, or nullopt:
// the benchmark is registered; every known parameter has its type and range (dtype and op by their
// parsers, sizes and counts 1 .. kMaxPointQuantity, GEMM shapes by the --gemm-shapes parser, ranks
// inside the world); then the benchmark's own point parser accepts it (a missing parameter is named).
std::optional<std::string> plan_point_problem(const std::string& benchmark, const nlohmann::json& params, int world_size);

// Every point of a resumed plan (--resume FILE's plan.point_list); throws gpuscale::Error
// "--resume FILE: plan.point_list[i] (benchmark): why" at the first bad one.
void check_resumed_points(const nlohmann::json& points, int world_size, const std::string& file);

}  // namespace gpuscale
