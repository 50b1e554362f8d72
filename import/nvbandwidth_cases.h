#pragma once
// What nvbandwidth's text output and its --json output share (import/nvbandwidth.cpp reads both):
// its testcases (NVIDIA/nvbandwidth v0.5 to v0.8, testcase.h and multinode_testcases.cpp) mapped to
// gpuscale's copy benchmarks (kernels/copy_table.h), a printed bandwidth matrix, and one matrix to
// result rows, one per measured cell, its sum held to the tool's own (the "SUM" line, "sum").
//
// Mapping, the nearest honest name, the testcase always kept in params.testcase:
//   host_to_device_*, host_to_all_*            copy.h2d   (bidirectional: the measured host-to-device
//   device_to_host_*, all_to_host_*            copy.d2h    stream, under opposite traffic)
//   device_to_device_* (and multinode_ ones)   copy.p2p_ce / copy.p2p_sm, params.direction read/write
//   all_to_one_*, one_to_all_*                 copy.p2p_ce / copy.p2p_sm, one row per target GPU
//   device_local_copy                          copy.d2d (nvbandwidth counts bytes once; gpuscale's d2d
//                                              counts read plus write: the row is 2x, once_counted_gbps 1x)
//   latency, multicast, bisect testcases       no gpuscale counterpart: left out, with a note.
// nvbandwidth measures one pair at a time (params.mode "one-pair") and prints the median of its
// samples (or the mean with -m, which it does not print: said in `missing`), and never its buffer size
// (-b): params have no size_bytes, and `missing` says why. params.gpu (and .peer) are the matrix's
// indices: one row per measured cell.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

enum class NvbShape { host, peer, to_one, local, none };

struct NvbCase {
  std::string_view key;
  std::string_view benchmark;  // "" for none
  NvbShape shape;
  std::string_view direction;  // peer and to_one: "read" or "write"
  bool bidirectional_matrices; // three matrices: <dir>1, <dir>2, total
};

// The testcase of `key`, or nullptr when nvbandwidth has none of that name.
const NvbCase* nvbandwidth_case(std::string_view key);

// One printed matrix: `cells` row by row, absent for "N/A".
struct NvbMatrix {
  std::string key;          // the SUM line's key: the testcase's, or <testcase>_read1 etc.
  std::string description;  // "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)"
  int rows = 0, columns = 0;
  std::vector<std::optional<double>> cells;
  std::vector<std::size_t> row_lines;  // text: each matrix row's line (1-based); JSON: empty
  std::optional<double> sum;           // as the tool printed it; JSON gives only a testcase's last
  double cell_resolution = 0;          // half the last printed digit of a cell, absolute
  bool relative_resolution = false;    // JSON: cells printed to 6 significant digits
  std::size_t line = 0;                // the description's line (text), 0 in JSON
};

// Where a problem is reported: a text line, or (line 0) a JSON pointer.
struct NvbWhere {
  const ImportText& src;
  std::string pointer;  // "" for text
  [[noreturn]] void fail(std::size_t line, std::string_view what) const;
};

// Adds the rows of testcase `c`'s `matrices` to `in` (whose ranks are read: one per GPU of the host,
// or under MPI (`multinode`) one per process), or a note when it has no gpuscale counterpart. Checks
// the count of matrices and their shape against the ranks, each sum against its cells, and that no
// GPU copies with itself.
void add_nvbandwidth_rows(ImportedInput& in, const NvbCase& c, const std::vector<NvbMatrix>& matrices, bool multinode,
                          const NvbWhere& where);

// The `missing` entries every nvbandwidth import carries.
void note_nvbandwidth_missing(ImportedInput& in);

}  // namespace gpuscale
