// nccl-tests' shared vocabulary (import/nccl_tests_rows.h).
#include "import/nccl_tests_rows.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/dtype.h"

namespace gpuscale {

const CollectiveSpec* nccl_tests_collective(std::string_view program) {
  const auto slash = program.find_last_of("/\\");
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  const CollectiveSpec* best = nullptr;
  for (const auto& spec : collective_table()) {
    // "alltoall_perf" is a prefix of "alltoallv_perf"? No ("alltoall_" vs "alltoallv"), but the longest
    // match wins all the same, so a future name that extends another cannot be taken for it.
    const bool exact = program == spec.nccl_tests;
    const bool suffixed = program.size() > spec.nccl_tests.size() && program.substr(0, spec.nccl_tests.size()) == spec.nccl_tests &&
                          (program[spec.nccl_tests.size()] == '_' || program[spec.nccl_tests.size()] == '.');
    if ((exact || suffixed) && (!best || spec.nccl_tests.size() > best->nccl_tests.size())) best = &spec;
  }
  return best;
}

namespace {

// The row of one half (placement) of a size line.
ImportedRow half_row(const ImportedInput& in, const CollectiveSpec& spec, const NcclTestsLine& l, DType type,
                     const NcclTestsHalf& h, bool in_place, const ImportText& src) {
  const int n = static_cast<int>(in.ranks.size());
  const auto es = dtype_size(type);
  const char* where = in_place ? "in-place" : "out-of-place";
  // nccl-tests' definitions (collectives/collective_table.h holds them for gpuscale's own rows).
  const auto counts = spec.counts(l.size_bytes / es, es, n, AlltoallvSkew{});
  if (counts.param != l.count || std::max(counts.send, counts.recv) * es != l.size_bytes)
    src.fail(l.line, fmt::format("size {} and count {} do not agree: {} of {} at {} ranks has count {}", l.size_bytes, l.count,
                                 spec.nccl_tests, dtype_nccl_tests_name(type), n, counts.param));
  const double factor = spec.bus_factor(n);
  if (n > 1) {
    const double want = h.algbw.value * factor;
    if (std::fabs(h.busbw.value - want) > h.busbw.resolution + factor * h.algbw.resolution + 1e-9)
      src.fail(l.line, fmt::format("{} busbw {} is not algbw {} x {} ({} at {} ranks)", where, h.busbw.value, h.algbw.value,
                                   spec.bus_factor_text, spec.name, n));
    if (!h.cputime && h.time_us.value > 0) {
      // algbw = bytes / time: the printed time's rounding carries into it, relatively.
      const double bytes = spec.algbw_bytes(counts, es, n);
      const double from_time = bytes / h.time_us.value / 1e3;
      const double slack = from_time * (h.time_us.resolution / h.time_us.value) + h.algbw.resolution + 1e-9;
      if (std::fabs(h.algbw.value - from_time) > slack * 1.01)
        src.fail(l.line, fmt::format("{} algbw {} is not the size over the time ({} B in {} us: {:.2f} GB/s)", where, h.algbw.value,
                                     bytes, h.time_us.value, from_time));
    }
  }
  ImportedRow r;
  r.benchmark = std::string(spec.name);
  r.scope = "collective";
  r.params = {{"dtype", dtype_name(type)}, {"size_bytes", l.size_bytes}, {"placement", in_place ? "in-place" : "out-of-place"}};
  if (spec.reduces) r.params["op"] = l.redop;
  if (spec.rooted) r.params["root"] = l.root;
  r.line = static_cast<int>(l.line);
  for (int k = 0; k < n; ++k) r.ranks.push_back(k);
  r.metrics = {{"size_bytes", l.size_bytes}, {"count", l.count}, {"bus_factor", factor}};
  r.metrics[h.cputime ? "cpu_time_us" : "time_us"] = h.time_us.value;
  // At one rank nothing crosses a link: gpuscale records no bandwidth there (docs/results.md).
  r.metrics["algbw"] = n > 1 ? nlohmann::json(h.algbw.value) : nlohmann::json(nullptr);
  r.metrics["busbw"] = n > 1 ? nlohmann::json(h.busbw.value) : nlohmann::json(nullptr);
  if (n > 1) r.aggregate = h.busbw.value;
  if (h.wrong) {
    r.metrics["wrong"] = *h.wrong;
    if (*h.wrong > 0) {
      r.status = RowStatus::invalid;
      r.aggregate.reset();
      r.errors.push_back(fmt::format("{} wrong values (nccl-tests' #wrong, {})", *h.wrong, where));
    }
  }
  return r;
}

}  // namespace

void add_nccl_tests_rows(ImportedInput& in, const CollectiveSpec& spec, const NcclTestsLine& l, const ImportText& src) {
  const auto type = parse_dtype(l.type);
  if (!type || !dtype_used_by(*type, kForCollectives))
    src.fail(l.line, fmt::format("element type {} is not one gpuscale's collectives take ({})", quote_input(l.type),
                                 dtype_names_text(kForCollectives)));
  if (spec.reduces && !parse_redop(l.redop)) src.fail(l.line, fmt::format("reduction {} is not one gpuscale measures", quote_input(l.redop)));
  if (!spec.reduces && l.redop != "none") src.fail(l.line, fmt::format("{} takes no reduction, but the line says {}", spec.nccl_tests, quote_input(l.redop)));
  if (spec.rooted ? l.root < 0 || l.root >= static_cast<long long>(in.ranks.size()) : l.root != -1)
    src.fail(l.line, fmt::format("root {} for {} at {} ranks", l.root, spec.nccl_tests, in.ranks.size()));
  if (l.size_bytes == 0) src.fail(l.line, "size 0: nccl-tests moves at least one element");
  if (l.out_of_place) in.rows.push_back(half_row(in, spec, l, *type, *l.out_of_place, false, src));
  // Collectives without an in-place variant of their own (nccl-tests still prints the columns) keep one row.
  if (l.in_place && spec.in_place) in.rows.push_back(half_row(in, spec, l, *type, *l.in_place, true, src));
}

std::optional<ImportedRank> parse_nccl_tests_rank(std::string_view line) {
  const auto w = split_words(line);
  // "#", "Rank", r, "Group", g, "Pid", p, "on", host, "device", d, "[bus]", name...
  if (w.size() < 12 || w[0] != "#" || w[1] != "Rank" || w[3] != "Group" || w[5] != "Pid" || w[7] != "on" || w[9] != "device")
    return std::nullopt;
  const auto rank = parse_integer(w[2]), pid = parse_integer(w[6]), dev = parse_integer(w[10]);
  if (!rank || !pid || !dev || *rank < 0 || *dev < 0 || *rank > 1 << 24 || *dev > 1 << 16) return std::nullopt;
  if (w[11].size() < 3 || w[11].front() != '[' || w[11].back() != ']') return std::nullopt;
  ImportedRank r;
  r.rank = static_cast<int>(*rank);
  r.pid = *pid;
  r.host = std::string(w[8]);
  r.device = static_cast<int>(*dev);
  r.pci_bus_id = std::string(w[11].substr(1, w[11].size() - 2));
  const auto at = line.find(w[11]) + w[11].size();
  r.device_name = std::string(trimmed(line.substr(at)));
  return r;
}

void note_nccl_tests_missing(ImportedInput& in) {
  in.missing.push_back("ranks' values (each rank's busbw and time): nccl-tests prints only the time reduced across ranks (its -a)");
  in.missing.push_back("spread: nccl-tests times one loop of its iterations per size, so there is no repetition spread");
  in.missing.push_back("expected_peak: gpuscale's link peaks are its own run's; an import carries none");
}

}  // namespace gpuscale
