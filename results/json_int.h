#pragma once
// A whole number read from a result file into an int: refused (nlohmann::json::out_of_range, which the
// readers report with the row's path) when it is not an integer or does not fit, never wrapped. JSON
// allows any integer, and nlohmann's get<int>() truncates: gpu_count 4294967297 would read as 1.
#include <climits>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale {

inline int json_int(const nlohmann::json& v, const char* what) {
  const bool fits = v.is_number_unsigned()  ? v.get<std::uint64_t>() <= static_cast<std::uint64_t>(INT_MAX)
                    : v.is_number_integer() ? v.get<std::int64_t>() >= INT_MIN && v.get<std::int64_t>() <= INT_MAX
                                            : false;
  if (!fits)
    throw nlohmann::json::out_of_range::create(
        406, std::string(what) + " " + v.dump().substr(0, 24) + " is not a whole number within 32 bits", &v);
  return v.get<int>();
}

}  // namespace gpuscale
