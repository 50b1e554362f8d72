#pragma once
// The per-iteration stragglers of a run's collective rows (issue 45): each row's pass names the world
// rank slowest in the most of its iterations (metrics.iter_straggler_rank, harness/benchmarks/iter_timing.h);
// across the rows, the ranks so named, most rows first, each with its host. A rank named by most
// rows is slow in its own part of every iteration (a slow host, GPU or NIC); at random ranks it is noise.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"
#include "text/text_table.h"

namespace gpuscale {

struct IterationStraggler {
  int rank = 0;
  std::string host;
  std::size_t rows = 0;        // collective rows that name it
  std::size_t of_rows = 0;     // collective rows that name any rank
  double median_share = 0;     // the median over those rows of the fraction of iterations it was slowest in
};

// Ok collective rows of 2 or more ranks with an iter_straggler_rank, ranks most often named first (ties:
// the lower rank).
std::vector<IterationStraggler> find_iteration_stragglers(const std::vector<ResultRow>& rows);

// The result file's analysis.iteration_stragglers (analysis/run_analysis.h): one object per rank, in the
// list's order: rank, host, rows, of_rows, median_share.
nlohmann::json iteration_stragglers_json(const std::vector<IterationStraggler>& list);

// The run summary's section: a heading with the rows counted, then the first `shown` ranks, one line
// each (rank, host, rows naming it, median share), within style.width; "" when no row has a pass.
std::string format_iteration_stragglers(const std::vector<IterationStraggler>& list, const TextStyle& style,
                                        std::size_t shown = 5);

}  // namespace gpuscale
