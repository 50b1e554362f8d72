#pragma once
// The nccl-tests table of a collective sweep (issue 16): one table per collective, GPU count and any
// other parameter (the transport), one line per (type, redop, root, size) with the out-of-place and
// the in-place measurement side by side, in nccl-tests' own columns, widths and number formats, so
// that `diff` or a side-by-side view lines the two tools up. Every figure is the row's own metric
// (size_bytes, count, time_us, algbw, busbw, wrong), never recomputed, so the table matches the JSON.
//
// Where gpuscale differs from nccl-tests, on purpose (docs/analysis.md):
// - a placement not measured prints "-" in each of its four columns;
// - a bandwidth of a row that is not ok prints the row's status (INVALID, FAILED, skipped) instead of
//   a figure: a wrong result is never shown as a measurement; a null or absent bandwidth prints n/a;
// - "Avg bus bandwidth" is the mean busbw of the table's ok rows that have one (both placements,
//   every size, type and op), and the line after it says how many rows that is; n/a when none.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "text/text_table.h"
#include "results/result_file.h"

namespace gpuscale {

struct NcclLine {
  const ResultRow* out_of_place = nullptr;  // nullptr: not measured
  const ResultRow* in_place = nullptr;
};

struct NcclTable {
  std::string benchmark;   // "all_reduce"
  std::string nccl_tests;  // "all_reduce_perf"
  int gpu_count = 0;
  std::string extra;       // the other parameters ("transport=mpi"), empty when none
  std::vector<NcclLine> lines;  // in order of first appearance in the file
};

// The tables of every collective row of the collective table (benchmarks that are not nccl-tests'
// collectives, such as the fleet's pair matrices, have none), in order of first appearance.
std::vector<NcclTable> nccl_tables(const std::vector<ResultRow>& rows);

struct NcclAverage {
  std::optional<double> busbw;  // nullopt when no row qualifies
  std::size_t rows = 0;         // the ok rows with a busbw that the mean is over
};
NcclAverage nccl_average(const NcclTable& t);

// The first five columns of a collective row as nccl-tests prints them (as the file has them: each
// format escapes them): size (the row's size_bytes, max of send and receive), count, type (nccl-tests'
// name), redop ("none" for a collective without one), root (-1 for an unrooted collective); "-" for a
// figure the row does not have. nullopt for a row that is not one of nccl-tests' collectives.
struct NcclPoint {
  std::string size, count, type, redop, root;
};
std::optional<NcclPoint> nccl_point(const ResultRow& r);

// nccl-tests' names for gpuscale's types: fp32 -> float, bf16 -> bfloat16, ...
std::string nccl_type_name(const std::string& dtype);
// nccl-tests' time format: %7.0f from 10 ms, %7.1f from 100 us, else %7.2f (without the padding).
std::string nccl_time_text(double us);

// The column headings of a data line, in order (as the table's heading spells them).
const std::vector<std::string>& nccl_column_names();

// One table: a title line, nccl-tests' three heading lines, one line per size, the out-of-bounds
// and "Avg bus bandwidth" lines and what the average is over. Wider than 80 columns, like nccl-tests'.
std::string nccl_table_text(const NcclTable& t, const DeviceWord& device);
// Every table of the rows, each after a blank line; empty when there is none.
std::string nccl_tables_text(const std::vector<ResultRow>& rows, const DeviceWord& device);

}  // namespace gpuscale
