#pragma once
// Size strings as nccl-tests takes them: a positive integer with an optional binary suffix
// K, M, G or T (1024^n; "KB", "KiB" and lower case accepted). Bandwidth is reported in GB/s with
// GB = 1e9 bytes, as nccl-tests, BabelStream and nvbandwidth do.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

// Parses "64M" -> 67108864. Throws gpuscale::Error naming `what` and the text on bad input
// (empty, negative, zero, junk, overflow).
std::uint64_t parse_size(std::string_view text, std::string_view what);
// Parses a positive integer count (iterations, repetitions, ...); throws on zero, negative or junk.
std::int64_t parse_positive(std::string_view text, std::string_view what);
// The same for counts held in an int (iterations, repetitions, threads): also throws above INT_MAX.
int parse_positive_int(std::string_view text, std::string_view what);
// A time span: a positive number with an optional unit s, m, h or d ("90", "90s", "1.5h", "2d") ->
// seconds. Throws gpuscale::Error naming `what` and the text on anything else (zero, negative, junk).
double parse_time_span(std::string_view text, std::string_view what);
// "1.5h", "2m", "90s", "2d": the shortest of these units that gives a whole number (else seconds, rounded
// to 0.1 s).
std::string format_time_span(double seconds);
// A duration a person reads, 4 significant digits in the largest unit that keeps it above 2 (or 120 s):
// "42.5 s", "95 min", "36 h", "12.3 days", "2.6 years".
std::string human_duration(double seconds);
// A rate's unit made per joule ("TFLOP/s" -> "TFLOP/J": work per energy, the rate over the power);
// nullopt for a unit that is not a rate per second.
std::optional<std::string> per_joule_unit(const std::string& rate_unit);
// "1024,2048" -> {1024, 2048} with parse_size on every item.
std::vector<std::uint64_t> parse_size_list(std::string_view csv, std::string_view what);
// Splits "a,b,c" into trimmed non-empty items; throws on an empty item.
std::vector<std::string> split_list(std::string_view csv, std::string_view what);

// 67108864 -> "64M", 1000 -> "1000" (exact binary suffix when there is one).
std::string format_size(std::uint64_t bytes);
// "12.00 GiB (12884901888 bytes)": memory amounts in messages, exact and readable.
std::string format_bytes(std::uint64_t bytes);

// a x b and a + b without wrapping (UINT64_MAX on overflow: a size that never fits). Memory planning
// multiplies user-given counts, which may be anything.
std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b);
// Sizes of a sweep from min to max: multiply by factor (factor > 1) or add step (step > 0), like
// nccl-tests' -f / -i. Always includes min; includes max only when the sweep lands on it.
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, std::uint64_t factor,
                                      std::uint64_t step);

}  // namespace gpuscale
