// nvbandwidth's testcases and matrices to result rows (import/nvbandwidth_cases.h).
#include "import/nvbandwidth_cases.h"

#include <array>
#include <cmath>

#include <fmt/format.h>

namespace gpuscale {
namespace {

using S = NvbShape;

// Every testcase nvbandwidth v0.8 has (nvbandwidth.cpp createTestcases), single-node and multinode.
constexpr std::array<NvbCase, 48> kCases{{
    {"host_to_device_memcpy_ce", "copy.h2d", S::host, "", false},
    {"device_to_host_memcpy_ce", "copy.d2h", S::host, "", false},
    {"host_to_device_bidirectional_memcpy_ce", "copy.h2d", S::host, "", false},
    {"device_to_host_bidirectional_memcpy_ce", "copy.d2h", S::host, "", false},
    {"device_to_device_memcpy_read_ce", "copy.p2p_ce", S::peer, "read", false},
    {"device_to_device_memcpy_write_ce", "copy.p2p_ce", S::peer, "write", false},
    {"device_to_device_bidirectional_memcpy_read_ce", "copy.p2p_ce", S::peer, "read", true},
    {"device_to_device_bidirectional_memcpy_write_ce", "copy.p2p_ce", S::peer, "write", true},
    {"all_to_host_memcpy_ce", "copy.d2h", S::host, "", false},
    {"all_to_host_bidirectional_memcpy_ce", "copy.d2h", S::host, "", false},
    {"host_to_all_memcpy_ce", "copy.h2d", S::host, "", false},
    {"host_to_all_bidirectional_memcpy_ce", "copy.h2d", S::host, "", false},
    {"all_to_one_write_ce", "copy.p2p_ce", S::to_one, "write", false},
    {"all_to_one_read_ce", "copy.p2p_ce", S::to_one, "read", false},
    {"one_to_all_write_ce", "copy.p2p_ce", S::to_one, "write", false},
    {"one_to_all_read_ce", "copy.p2p_ce", S::to_one, "read", false},
    {"host_to_device_memcpy_sm", "copy.h2d", S::host, "", false},
    {"device_to_host_memcpy_sm", "copy.d2h", S::host, "", false},
    {"host_to_device_bidirectional_memcpy_sm", "copy.h2d", S::host, "", false},
    {"device_to_host_bidirectional_memcpy_sm", "copy.d2h", S::host, "", false},
    {"device_to_device_memcpy_read_sm", "copy.p2p_sm", S::peer, "read", false},
    {"device_to_device_memcpy_write_sm", "copy.p2p_sm", S::peer, "write", false},
    {"device_to_device_bidirectional_memcpy_read_sm", "copy.p2p_sm", S::peer, "read", true},
    {"device_to_device_bidirectional_memcpy_write_sm", "copy.p2p_sm", S::peer, "write", true},
    {"all_to_host_memcpy_sm", "copy.d2h", S::host, "", false},
    {"all_to_host_bidirectional_memcpy_sm", "copy.d2h", S::host, "", false},
    {"host_to_all_memcpy_sm", "copy.h2d", S::host, "", false},
    {"host_to_all_bidirectional_memcpy_sm", "copy.h2d", S::host, "", false},
    {"all_to_one_write_sm", "copy.p2p_sm", S::to_one, "write", false},
    {"all_to_one_read_sm", "copy.p2p_sm", S::to_one, "read", false},
    {"one_to_all_write_sm", "copy.p2p_sm", S::to_one, "write", false},
    {"one_to_all_read_sm", "copy.p2p_sm", S::to_one, "read", false},
    {"host_device_latency_sm", "", S::none, "", false},
    {"device_to_device_latency_sm", "", S::none, "", false},
    {"device_local_copy", "copy.d2d", S::local, "", false},
    {"multinode_device_to_device_memcpy_read_ce", "copy.p2p_ce", S::peer, "read", false},
    {"multinode_device_to_device_memcpy_write_ce", "copy.p2p_ce", S::peer, "write", false},
    {"multinode_device_to_device_bidirectional_memcpy_read_ce", "copy.p2p_ce", S::peer, "read", true},
    {"multinode_device_to_device_bidirectional_memcpy_write_ce", "copy.p2p_ce", S::peer, "write", true},
    {"multinode_device_to_device_memcpy_read_sm", "copy.p2p_sm", S::peer, "read", false},
    {"multinode_device_to_device_memcpy_write_sm", "copy.p2p_sm", S::peer, "write", false},
    {"multinode_device_to_device_bidirectional_memcpy_read_sm", "copy.p2p_sm", S::peer, "read", true},
    {"multinode_device_to_device_bidirectional_memcpy_write_sm", "copy.p2p_sm", S::peer, "write", true},
    {"multinode_device_to_device_all_to_one_write_sm", "copy.p2p_sm", S::to_one, "write", false},
    {"multinode_device_to_device_all_from_one_read_sm", "copy.p2p_sm", S::to_one, "read", false},
    {"multinode_device_to_device_broadcast_one_to_all_sm", "", S::none, "", false},
    {"multinode_device_to_device_broadcast_all_to_all_sm", "", S::none, "", false},
    {"multinode_bisect_write_ce", "", S::none, "", false},
}};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

// The rank that matrix index `idx` stands for: under MPI a multinode testcase's index is the process;
// any other testcase's is a GPU of rank 0's host (nvbandwidth prints only rank 0's results).
int rank_of(const ImportedInput& in, const NvbCase& c, int idx, bool multinode, const NvbWhere& where, std::size_t line) {
  if (!multinode || starts_with(c.key, "multinode_")) return idx;
  const auto& first = in.ranks.front();
  for (const auto& r : in.ranks)
    if (r.host == first.host && r.device == idx) return r.rank;
  where.fail(line, fmt::format("column {} is device {} of {}, which no \"Process\" line names", idx, idx, quote_input(first.host)));
}

// How many GPUs the matrix of `c` spans: every rank, or the GPUs of rank 0's host.
int span_of(const ImportedInput& in, const NvbCase& c, bool multinode) {
  if (!multinode || starts_with(c.key, "multinode_")) return static_cast<int>(in.ranks.size());
  int n = 0;
  for (const auto& r : in.ranks) n += r.host == in.ranks.front().host;
  return n;
}

}  // namespace

void NvbWhere::fail(std::size_t line, std::string_view what) const {
  if (pointer.empty()) src.fail(line, what);
  src.fail(0, fmt::format("{}: {}", pointer, what));
}

const NvbCase* nvbandwidth_case(std::string_view key) {
  for (const auto& c : kCases)
    if (c.key == key) return &c;
  return nullptr;
}

void add_nvbandwidth_rows(ImportedInput& in, const NvbCase& c, const std::vector<NvbMatrix>& matrices, bool multinode, const NvbWhere& where) {
  const std::size_t want = c.bidirectional_matrices ? 3 : 1;
  const std::size_t at = matrices.empty() ? 0 : matrices.front().line;
  if (matrices.size() != want)
    where.fail(at, fmt::format("{}: {} matrices, nvbandwidth prints {} for it (a cut or repeated block)", c.key, matrices.size(), want));
  const int n = span_of(in, c, multinode);
  for (std::size_t m = 0; m < matrices.size(); ++m) {
    const NvbMatrix& x = matrices[m];
    // The three matrices of a bidirectional testcase are <key>_<dir>1, <key>_<dir>2, <key>_total.
    std::string part;
    if (c.bidirectional_matrices) part = m == 2 ? "total" : fmt::format("{}{}", c.direction, m + 1);
    const std::string sum_key = part.empty() ? std::string(c.key) : fmt::format("{}_{}", c.key, part);
    if (!x.key.empty() && x.key != sum_key)
      where.fail(x.line, fmt::format("the matrix is summed as {}, expected {} (a block of another testcase, or reordered)", quote_input(x.key), sum_key));
    // Its shape first (a cut row shows there), then its cells against its sum: nvbandwidth adds the
    // values it then prints (N/A as 0).
    const int rows = c.shape == NvbShape::peer ? n : 1;
    if (c.shape != NvbShape::none && (x.rows != rows || x.columns != n))
      where.fail(x.line, fmt::format("{}: a {}x{} matrix, expected {}x{} for {} {} (a cut or edited matrix)", sum_key, x.rows, x.columns, rows, n, n,
                                     multinode && starts_with(c.key, "multinode_") ? "processes" : "GPUs"));
    double sum = 0, slack = 1e-9;
    for (const auto& v : x.cells) {
      sum += v.value_or(0.0);
      slack += x.relative_resolution ? std::fabs(v.value_or(0.0)) * x.cell_resolution : x.cell_resolution;
    }
    if (!x.relative_resolution) slack += x.cell_resolution;  // the printed sum's own rounding
    if (x.sum && std::fabs(sum - *x.sum) > slack)
      where.fail(x.line, fmt::format("{}: the cells add up to {:.2f}, the tool's sum is {:.2f} (a cell or the sum was edited, or a row cut)", sum_key, sum, *x.sum));
    if (c.shape == NvbShape::none) continue;
    int zeros = 0;
    for (int r = 0; r < x.rows; ++r)
      for (int col = 0; col < x.columns; ++col) {
        const auto& v = x.cells[static_cast<std::size_t>(r * x.columns + col)];
        const std::size_t line = x.row_lines.empty() ? 0 : x.row_lines[static_cast<std::size_t>(r)];
        if (!v) continue;
        if (c.shape == NvbShape::peer && r == col) {
          if (*v != 0) where.fail(line, fmt::format("{}: GPU {} with itself has {} GB/s: nvbandwidth measures no such pair", sum_key, r, *v));
          continue;
        }
        if (*v == 0) {
          ++zeros;  // older versions print 0.00 for a pair they did not measure
          continue;
        }
        ImportedRow row;
        row.benchmark = std::string(c.benchmark);
        row.scope = "independent";
        row.line = static_cast<int>(line);
        row.params = {{"testcase", c.key},
                      {"engine", ends_with(c.benchmark, "_sm") || ends_with(c.key, "_sm") ? "sm" : "ce"},
                      {"mode", "one-pair"}};
        if (!part.empty()) row.params["matrix"] = part;
        if (!c.direction.empty()) row.params["direction"] = c.direction;
        const int idx = c.shape == NvbShape::peer ? r : col;
        row.ranks = {rank_of(in, c, idx, multinode, where, line)};
        row.params["gpu"] = idx;  // the matrix's index: rows of one testcase differ by their GPU (and peer)
        if (c.shape == NvbShape::peer) row.params["peer"] = rank_of(in, c, col, multinode, where, line);
        if (c.shape == NvbShape::local) {
          // gpuscale's d2d counts each byte read and written (kernels/copy_table.h); nvbandwidth once.
          row.aggregate = 2 * *v;
          row.metrics = {{"once_counted_gbps", *v}, {"counting", "read+write"}};
        } else {
          row.aggregate = *v;
          row.metrics = {{"counting", "once"}};
        }
        row.metrics["nvbandwidth_matrix"] = x.description;
        in.rows.push_back(std::move(row));
      }
    if (zeros) in.notes.push_back(fmt::format("{}: {} cells of 0.00 (a pair not measured) left out", sum_key, zeros));
  }
  if (c.shape == NvbShape::none)
    in.notes.push_back(fmt::format("{} left out: gpuscale has no benchmark of what it measures", c.key));
}

void note_nvbandwidth_missing(ImportedInput& in) {
  in.missing.push_back("size_bytes: nvbandwidth does not print its buffer size (-b, 512 MiB by default in v0.8)");
  in.missing.push_back("spread and per-sample values: nvbandwidth prints the median of its samples (the mean with -m, "
                       "which it does not record), not the samples");
  in.missing.push_back("cuda_runtime: nvbandwidth's \"CUDA Runtime Version\" is the driver's CUDA version (it prints the "
                       "driver's for both), not the runtime's");
  in.missing.push_back("per-rank figures: nvbandwidth prints one figure per pair, the row's only value");
}

}  // namespace gpuscale
