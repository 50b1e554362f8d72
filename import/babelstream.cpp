// BabelStream's CSV and text output (import/babelstream.h).
#include "import/babelstream.h"

#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "core/dtype.h"
#include "kernels/stream_table.h"

namespace gpuscale {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// BabelStream's kernels (src/benchmark.h: label and weight, the arrays moved per element) and
// gpuscale's; Nstream has none.
struct Kernel {
  std::string_view label;
  std::optional<StreamOp> op;
  int weight;
};
constexpr std::array<Kernel, 6> kKernels{{{"Copy", StreamOp::copy, 2},
                                          {"Mul", StreamOp::scale, 2},
                                          {"Add", StreamOp::add, 3},
                                          {"Triad", StreamOp::triad, 3},
                                          {"Dot", StreamOp::dot, 2},
                                          {"Nstream", std::nullopt, 4}}};

// Bytes per unit of BabelStream's Unit (src/Unit.h), by its name; version 4's "mbytes" is MB.
std::optional<double> unit_bytes(std::string_view u) {
  if (u == "MB" || u == "mbytes" || u == "MBytes") return 1e6;
  if (u == "GB") return 1e9;
  if (u == "TB") return 1e12;
  if (u == "MiB") return 1048576.0;
  if (u == "GiB") return 1073741824.0;
  if (u == "TiB") return 1099511627776.0;
  return std::nullopt;
}

ImportedInput base(const ImportText& src, const char* format, const std::string& backend) {
  ImportedInput in;
  in.file = src.name();
  in.format = format;
  in.tool = "BabelStream";
  in.backend = backend;
  in.command_line_note = "BabelStream does not print its command line";
  ImportedRank r;  // one process, one device: BabelStream names neither host nor device ordinal
  in.ranks.push_back(r);
  in.missing.push_back("host: BabelStream does not print the host it ran on");
  in.missing.push_back("ranks' values and aggregate: BabelStream prints its best repetition (max bandwidth) and the mean "
                       "time, not the median gpuscale's value is; the best is best_gb_s");
  in.missing.push_back("spread: BabelStream prints min, max and mean times, not the median's confidence interval");
  return in;
}

// One kernel's row from its figures. `elements` per array, `size` bytes per element.
void add_row(ImportedInput& in, const ImportText& src, std::size_t line, std::string_view label, unsigned long long elements,
             unsigned long long size, double best_gbs, double min_s, double max_s, double avg_s, double time_res, std::set<std::string>& seen) {
  const Kernel* k = nullptr;
  for (const auto& c : kKernels)
    if (c.label == label) k = &c;
  if (!k) src.fail(line, fmt::format("unknown kernel {}: BabelStream's are Copy, Mul, Add, Triad, Dot, Nstream", quote_input(label)));
  if (!seen.insert(std::string(label)).second) src.fail(line, fmt::format("kernel {} printed twice", quote_input(label)));
  if (!(min_s > 0) || max_s < min_s || avg_s < min_s || avg_s > max_s)
    src.fail(line, fmt::format("times min {} max {} average {} are not in order (min <= average <= max, min > 0)", min_s, max_s, avg_s));
  // BabelStream's bandwidth is weight x sizeof x N over the fastest time: held to it, within the
  // rounding of the printed time (time_res) and 1% for the bandwidth's, so an edited figure is refused.
  const double bytes = static_cast<double>(k->weight) * static_cast<double>(size) * static_cast<double>(elements);
  const double from_time = bytes / min_s / 1e9;
  if (std::fabs(from_time - best_gbs) > (0.01 + time_res / min_s) * from_time)
    src.fail(line, fmt::format("{} bandwidth {:.6g} GB/s is not {} bytes over the min time {} s ({:.6g} GB/s)", label, best_gbs, bytes, min_s, from_time));
  if (!k->op) {
    in.notes.push_back(fmt::format("{} ({:.6g} GB/s) left out: gpuscale has no Nstream benchmark", label, best_gbs));
    return;
  }
  const auto type = size == 8 ? DType::fp64 : DType::fp32;
  ImportedRow r;
  r.benchmark = fmt::format("stream.{}", stream_spec(*k->op).name);
  r.scope = "independent";
  r.params = {{"dtype", dtype_name(type)}, {"array_bytes", elements * size}, {"elements", elements}};
  r.ranks = {0};
  r.line = static_cast<int>(line);
  r.rank_metrics = {{"bytes_per_pass", stream_bytes(*k->op, elements, size)}, {"best_gb_s", best_gbs}, {"best_time_us", min_s * 1e6},
                    {"max_time_us", max_s * 1e6}, {"mean_time_us", avg_s * 1e6}};
  r.metrics = {{"best_aggregate_gb_s", best_gbs}};
  in.rows.push_back(std::move(r));
}

void check_sizeof(const ImportText& src, std::size_t line, long long size) {
  if (size != 4 && size != 8) src.fail(line, fmt::format("sizeof {}: BabelStream runs float (4) or double (8)", size));
}

}  // namespace

bool looks_like_babelstream_csv(const ImportText& src) {
  return !src.lines().empty() && starts_with(src.lines().front(), "function,num_times,n_elements,sizeof,");
}

bool looks_like_babelstream_text(const ImportText& src) {
  return !src.lines().empty() && trimmed(src.lines().front()) == "BabelStream";
}

ImportedInput read_babelstream_csv(const ImportText& src, const std::string& backend) {
  if (backend.empty())
    src.fail(0, "BabelStream's CSV does not say what it ran on: pass --backend cpu or --backend cuda");
  ImportedInput in = base(src, "babelstream-csv", backend);
  in.missing.push_back("tool version: BabelStream's CSV does not print it (its text output does)");
  const auto& lines = src.lines();
  const auto head = split_on(lines.front(), ',');
  const std::array<std::string_view, 8> want = {"function", "num_times", "n_elements", "sizeof", "", "min_runtime", "max_runtime", "avg_runtime"};
  if (head.size() != want.size()) src.fail(1, fmt::format("{} columns, BabelStream's CSV has 8", head.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    if (i != 4 && head[i] != want[i]) src.fail(1, fmt::format("column {} is {}, expected {}", i + 1, quote_input(head[i]), quote_input(want[i])));
  const auto bw = head[4];
  if (!starts_with(bw, "max_") || bw.size() < 13 || bw.substr(bw.size() - 8) != "_per_sec")
    src.fail(1, fmt::format("column 5 is {}, expected max_<unit>_per_sec", quote_input(bw)));
  const auto per = unit_bytes(bw.substr(4, bw.size() - 12));
  if (!per) src.fail(1, fmt::format("unit {} is not one of BabelStream's (MB, MiB, GB, GiB, TB, TiB)", quote_input(bw.substr(4, bw.size() - 12))));
  std::set<std::string> seen;
  std::optional<long long> times;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::size_t no = i + 1;
    if (trimmed(lines[i]).empty()) continue;
    const auto f = split_on(lines[i], ',');
    if (f.size() != 8) src.fail(no, fmt::format("{} fields, the header has 8 (a cut or edited line)", f.size()));
    const auto n = parse_integer(f[1]), elements = parse_integer(f[2]), size = parse_integer(f[3]);
    if (!n || *n < 2) src.fail(no, fmt::format("num_times {} is not a count of at least 2", quote_input(f[1])));
    if (!elements || *elements < 1) src.fail(no, fmt::format("n_elements {} is not a positive count", quote_input(f[2])));
    if (!size) src.fail(no, fmt::format("sizeof {} is not a number", quote_input(f[3])));
    check_sizeof(src, no, *size);
    if (times && *times != *n) src.fail(no, fmt::format("num_times {} after {}: one run prints one", *n, *times));
    times = *n;
    double v[4];
    for (int k = 0; k < 4; ++k) {
      const auto x = parse_number(f[4 + k]);
      if (!x || *x < 0) src.fail(no, fmt::format("{} {} is not a non-negative number", head[4 + k], quote_input(f[4 + k])));
      v[k] = *x;
    }
    add_row(in, src, no, f[0], static_cast<unsigned long long>(*elements), static_cast<unsigned long long>(*size), v[0] * *per / 1e9, v[1],
            v[2], v[3], 5e-6 * v[1], seen);
  }
  if (seen.empty()) src.fail(lines.size(), "a header and no kernel line (truncated)");
  if (times) in.notes.push_back(fmt::format("repetitions per kernel: {} (BabelStream leaves the first out of its figures)", *times));
  return in;
}

ImportedInput read_babelstream_text(const ImportText& src, const std::string& backend) {
  ImportedInput in = base(src, "babelstream", backend);
  const auto& lines = src.lines();
  std::optional<long long> elements;
  long long size = 0;
  std::optional<double> per;
  std::size_t table = 0;
  std::set<std::string> seen;
  std::string implementation;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t no = i + 1;
    const auto l = trimmed(lines[i]);
    if (l.empty()) continue;
    if (!table) {
      if (starts_with(l, "Version: ")) in.tool_version = std::string(trimmed(l.substr(9)));
      else if (starts_with(l, "Implementation: ")) implementation = std::string(trimmed(l.substr(16)));
      else if (starts_with(l, "Number of elements: ")) {
        elements = parse_integer(trimmed(l.substr(20)));
        if (!elements || *elements < 1) src.fail(no, fmt::format("number of elements {} is not a positive count", quote_input(l.substr(20))));
      } else if (starts_with(l, "Precision: ")) {
        const auto p = trimmed(l.substr(11));
        if (p != "float" && p != "double") src.fail(no, fmt::format("precision {} is not float or double", quote_input(p)));
        size = p == "float" ? 4 : 8;
      } else if (starts_with(l, "CUDA Device ") || starts_with(l, "Using ")) {
        const auto q = l.find('"');
        if (q != std::string_view::npos && l.rfind('"') > q) in.ranks[0].device_name = std::string(l.substr(q + 1, l.rfind('"') - q - 1));
      } else if (starts_with(l, "Function")) {
        const auto w = split_words(l);
        if (w.size() != 6 || w[2] != "Min" || w[3] != "(sec)" || w[4] != "Max" || w[5] != "Average")
          src.fail(no, "the table header is not BabelStream's (\"Function <unit>/s Min (sec) Max Average\")");
        const auto u = w[1];
        const auto slash = u.find("/s");
        per = slash == std::string_view::npos ? std::nullopt : unit_bytes(u.substr(0, slash));
        if (u == "MBytes/sec") per = 1e6;  // version 4
        if (!per) src.fail(no, fmt::format("bandwidth unit {} is not one of BabelStream's", quote_input(u)));
        if (!elements || !size) src.fail(no, "the table comes before \"Number of elements\" and \"Precision\" (a mixed-up or cut header)");
        table = no;
      }
      continue;
    }
    const auto w = split_words(l);
    if (w.size() != 5) src.fail(no, fmt::format("{} fields, the table has 5 (a cut or edited line)", w.size()));
    double v[4];
    for (int k = 0; k < 4; ++k) {
      const auto x = parse_number(w[1 + k]);
      if (!x || *x < 0) src.fail(no, fmt::format("{} is not a non-negative number", quote_input(w[1 + k])));
      v[k] = *x;
    }
    // The text prints 3 significant digits of bandwidth and 5 of time: held with add_row's 1%.
    add_row(in, src, no, w[0], static_cast<unsigned long long>(*elements), static_cast<unsigned long long>(size), v[0] * *per / 1e9, v[1], v[2],
            v[3], 5e-6, seen);
  }
  if (!table) src.fail(lines.size(), "no \"Function\" table: the output ends before its results (truncated?)");
  if (seen.empty()) src.fail(lines.size(), "the table has no kernel line (truncated)");
  if (!in.tool_version) in.missing.push_back("tool version: the output has no \"Version:\" line");
  // What the implementation ran on: CPU models run on the CPU; CUDA on a GPU; others may run on either.
  static const std::set<std::string, std::less<>> cpu = {"OpenMP", "Serial", "TBB", "STD (data-oriented)", "STD (index-oriented)", "STD (ranges)"};
  std::string ran_on = cpu.count(implementation) ? "cpu" : implementation == "CUDA" ? "cuda" : "";
  if (!backend.empty() && !ran_on.empty() && backend != ran_on)
    src.fail(0, fmt::format("--backend {}, but the output's implementation {} runs on the {}", backend, quote_input(implementation), ran_on));
  if (ran_on.empty() && backend.empty())
    src.fail(0, fmt::format("implementation {} may run on a CPU or a GPU: pass --backend cpu or --backend cuda", quote_input(implementation)));
  in.backend = ran_on.empty() ? backend : ran_on;
  in.notes.push_back(fmt::format("implementation: {}", implementation.empty() ? "not printed" : implementation));
  return in;
}

}  // namespace gpuscale
