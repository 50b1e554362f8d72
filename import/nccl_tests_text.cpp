// nccl-tests' text output (import/nccl_tests_text.h).
#include "import/nccl_tests_text.h"

#include <cmath>
#include <set>

#include <fmt/format.h>

#include "import/nccl_tests_rows.h"

namespace gpuscale {
namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A printed number and its resolution: half a unit of its last printed digit (getFloatStr's %.2f,
// %.1f, %.0f or %.1e).
std::optional<PrintedFigure> printed(std::string_view w) {
  const auto v = parse_number(w);
  if (!v || *v < 0) return std::nullopt;
  const auto e = w.find_first_of("eE");
  const auto mantissa = w.substr(0, e);
  const auto dot = mantissa.find('.');
  const int decimals = dot == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  double res = 0.5 * std::pow(10.0, -decimals);
  if (e != std::string_view::npos) res *= std::pow(10.0, static_cast<double>(parse_integer(w.substr(e + 1)).value_or(0)));
  return PrintedFigure{*v, res};
}

// "2.19.6" from "# nccl-tests version 2.19.6 nccl-headers=22703 nccl-library=22703"; the NCCL library
// from nccl-library's code (major*10000 + minor*100 + patch since NCCL 2.9).
void read_version_line(std::string_view line, ImportedInput& in) {
  const auto w = split_words(line);
  if (w.size() >= 4) in.tool_version = std::string(w[3]);
  for (const auto& word : w)
    if (starts_with(word, "nccl-library="))
      if (const auto code = parse_integer(word.substr(13)); code && *code >= 20900)
        in.software["nccl"] = fmt::format("{}.{}.{}", *code / 10000, *code / 100 % 100, *code % 100);
}

// The table's column names, as nccl-tests prints them: size count type redop root, then each half
// (time or cputime, algbw, busbw, #wrong, and with -I i_min i_max i_p99 i_cv%), then "timestamp" (-Z).
struct Columns {
  std::size_t half = 4;  // words per half
  bool cputime = false;
  bool timestamp = false;
  std::size_t words() const { return 5 + 2 * half + (timestamp ? 2 : 0); }
};

std::optional<Columns> parse_columns(const std::vector<std::string_view>& w, std::string& why) {
  // w[0] is "#".
  const std::vector<std::string_view> lead = {"size", "count", "type", "redop", "root"};
  for (std::size_t i = 0; i < lead.size(); ++i)
    if (i + 1 >= w.size() || w[i + 1] != lead[i]) {
      why = fmt::format("column {} is {}, expected {} (nccl-tests' columns: size count type redop root ...)", i + 1,
                        i + 1 < w.size() ? quote_input(w[i + 1]) : "missing", quote_input(lead[i]));
      return std::nullopt;
    }
  Columns c;
  std::vector<std::string_view> rest(w.begin() + 6, w.end());
  if (!rest.empty() && rest.back() == "timestamp") {
    c.timestamp = true;
    rest.pop_back();
  }
  c.half = rest.size() / 2;
  if (rest.size() % 2 || (c.half != 4 && c.half != 8)) {
    why = fmt::format("{} columns after root, expected 8 (or 16 with -I's per-iteration columns)", rest.size());
    return std::nullopt;
  }
  c.cputime = rest[0] == "cputime";
  const std::vector<std::string_view> half = {c.cputime ? "cputime" : "time", "algbw", "busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%"};
  for (int h = 0; h < 2; ++h)
    for (std::size_t i = 0; i < c.half; ++i)
      if (rest[h * c.half + i] != half[i]) {
        why = fmt::format("{} column {} is {}, expected {}", h ? "in-place" : "out-of-place", i + 1, quote_input(rest[h * c.half + i]), quote_input(half[i]));
        return std::nullopt;
      }
  return c;
}

NcclTestsHalf parse_half(const std::vector<std::string_view>& w, std::size_t at, const Columns& c, std::size_t line,
                         const char* which, const ImportText& src) {
  NcclTestsHalf h;
  h.cputime = c.cputime;
  const char* names[3] = {"time", "algbw", "busbw"};
  PrintedFigure* figs[3] = {&h.time_us, &h.algbw, &h.busbw};
  for (int i = 0; i < 3; ++i) {
    const auto f = printed(w[at + i]);
    if (!f) src.fail(line, fmt::format("{} {} {} is not a non-negative number", which, names[i], quote_input(w[at + i])));
    *figs[i] = *f;
  }
  if (w[at + 3] != "N/A") {
    const auto wrong = parse_number(w[at + 3]);
    if (!wrong || *wrong < 0 || std::floor(*wrong) != *wrong)
      src.fail(line, fmt::format("{} #wrong {} is not a count (or N/A)", which, quote_input(w[at + 3])));
    h.wrong = *wrong;
  }
  for (std::size_t i = 4; i < c.half; ++i)
    if (!printed(w[at + i])) src.fail(line, fmt::format("{} per-iteration column {} is not a number", which, quote_input(w[at + i])));
  return h;
}

}  // namespace

bool looks_like_nccl_tests_text(const ImportText& src) {
  for (const auto& l : src.lines())
    if (starts_with(l, "# nThread ") || starts_with(l, "# nccl-tests version ") || starts_with(l, "# Collective test starting:")) return true;
  return false;
}

ImportedInput read_nccl_tests_text(const ImportText& src, const std::string& collective) {
  ImportedInput in;
  in.file = src.name();
  in.format = "nccl-tests";
  in.tool = "nccl-tests";
  in.backend = "cuda";
  in.command_line_note = "nccl-tests' text output does not print its command line (its -J JSON does)";
  const auto& lines = src.lines();
  enum class At { preamble, banner, units, table, footer, done } at = At::preamble;
  std::string program;
  std::size_t program_line = 0, columns_line = 0, iters_line = 0;
  Columns columns;
  bool saw_bounds = false, saw_avg = false;
  double avg_bus = 0, sum_bus = 0;
  std::size_t n_bus = 0;
  const CollectiveSpec* spec = nullptr;
  std::set<std::string> seen_points;  // type|redop|root|size: a size printed twice (-N) is refused
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::size_t no = i + 1;
    const std::string_view l = lines[i];
    const auto w = split_words(l);
    const bool comment = !l.empty() && l.front() == '#';
    if (w.empty()) continue;
    // NCCL's own lines (NCCL_DEBUG=INFO, WARN) and the launcher's may interleave anywhere.
    if (!comment && (l.find(" NCCL INFO ") != std::string_view::npos || l.find(" NCCL WARN ") != std::string_view::npos)) continue;
    if (at == At::preamble) {
      if (starts_with(l, "# nccl-tests version ")) read_version_line(l, in);
      else if (starts_with(l, "# Collective test starting:")) {
        program = std::string(trimmed(l.substr(27)));
        program_line = no;
      } else if (starts_with(l, "# nThread ")) {
        iters_line = no;
        // "... warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0"
        for (std::size_t k = 0; k + 1 < w.size(); ++k)
          if (w[k] == "iters:" && k > 0 && w[k - 1] != "warmup" && w[k - 1] != "agg") {
            const auto iters = parse_integer(w[k + 1]);
            if (!iters || *iters < 1) src.fail(no, fmt::format("iters {} is not a positive count", quote_input(w[k + 1])));
            in.notes.push_back(fmt::format("iterations per size: {}", *iters));
          }
      } else if (comment && w.size() >= 2 && w[1] == "Rank") {
        auto r = parse_nccl_tests_rank(l);
        if (!r) src.fail(no, "a Rank line that is not nccl-tests' (\"#  Rank N Group G Pid P on HOST device D [BUS] NAME\")");
        if (r->rank != static_cast<int>(in.ranks.size()))
          src.fail(no, fmt::format("rank {} where rank {} was expected (ranks are printed in order from 0)", r->rank, in.ranks.size()));
        in.ranks.push_back(std::move(*r));
      } else if (comment && w.size() >= 3 && w[1] == "size") {
        src.fail(no, "the column header comes before its banner line (\"out-of-place ... in-place\")");
      } else if (comment && l.find("out-of-place") != std::string_view::npos) {
        at = At::banner;
      } else if (comment && (starts_with(l, "# Out of bounds") || starts_with(l, "# Avg bus"))) {
        src.fail(no, "a footer line before the table's header (a mixed-up or cut log)");
      }
      continue;
    }
    if (at == At::banner) {
      if (!comment || w.size() < 2 || w[1] != "size") src.fail(no, "expected the column header (\"#  size  count  type  redop  root ...\")");
      std::string why;
      const auto c = parse_columns(w, why);
      if (!c) src.fail(no, why);
      columns = *c;
      columns_line = no;
      at = At::units;
      continue;
    }
    if (at == At::units) {
      if (!comment || w.size() < 3 || w[1] != "(B)" || w[2] != "(elements)") src.fail(no, "expected the units line (\"#  (B)  (elements) ...\")");
      if (in.ranks.empty()) src.fail(no, "no \"Rank\" line before the table: the log names no GPU");
      if (program.empty() && collective.empty())
        src.fail(columns_line, "the log does not name its collective (nccl-tests before 2.18 does not print it): pass --collective, e.g. all_reduce_perf");
      const std::string& name = collective.empty() ? program : collective;
      spec = nccl_tests_collective(name);
      if (!spec) src.fail(program.empty() ? columns_line : program_line, fmt::format("unknown collective {}: gpuscale measures {}", quote_input(name), [] {
                            std::string all;
                            for (const auto& s : collective_table()) all += (all.empty() ? "" : ", ") + std::string(s.nccl_tests);
                            return all;
                          }()));
      if (!program.empty() && !collective.empty() && nccl_tests_collective(program) != spec)
        src.fail(program_line, fmt::format("the log is {}, but --collective says {}", quote_input(program), quote_input(collective)));
      in.command_line_note += program.empty() ? "" : fmt::format("; the binary was {}", program);
      at = At::table;
      continue;
    }
    if (at == At::table) {
      if (comment) {
        if (!starts_with(l, "# Out of bounds values")) src.fail(no, fmt::format("{} inside the table (expected a size line or the footer)", quote_input(l)));
        at = At::footer;
      } else {
        if (w.size() != columns.words())
          src.fail(no, fmt::format("{} fields, but the header at line {} has {} columns (a cut or edited line)", w.size(), columns_line, columns.words()));
        NcclTestsLine t;
        t.line = no;
        const auto size = parse_integer(w[0]), count = parse_integer(w[1]), root = parse_integer(w[4]);
        if (!size || *size < 0) src.fail(no, fmt::format("size {} is not a byte count", quote_input(w[0])));
        if (!count || *count < 0) src.fail(no, fmt::format("count {} is not an element count", quote_input(w[1])));
        if (!root) src.fail(no, fmt::format("root {} is not a rank", quote_input(w[4])));
        t.size_bytes = static_cast<unsigned long long>(*size);
        t.count = static_cast<unsigned long long>(*count);
        t.type = std::string(w[2]);
        t.redop = std::string(w[3]);
        t.root = *root;
        t.out_of_place = parse_half(w, 5, columns, no, "out-of-place", src);
        t.in_place = parse_half(w, 5 + columns.half, columns, no, "in-place", src);
        const auto key = fmt::format("{}|{}|{}|{}", t.type, t.redop, t.root, t.size_bytes);
        if (!seen_points.insert(key).second)
          src.fail(no, fmt::format("size {} ({}) printed twice (nccl-tests -N repeats the sweep): import one sweep", t.size_bytes, t.type));
        sum_bus += t.out_of_place->busbw.value + t.in_place->busbw.value;
        n_bus += 2;
        add_nccl_tests_rows(in, *spec, t, src);
        continue;
      }
    }
    if (at == At::footer) {
      if (starts_with(l, "# Out of bounds values")) {
        const auto colon = l.find(':');
        const auto v = colon == std::string_view::npos ? std::vector<std::string_view>{} : split_words(l.substr(colon + 1));
        const auto n = v.empty() ? std::nullopt : parse_integer(v[0]);
        if (!n || *n < 0) src.fail(no, "\"Out of bounds values\" without its count");
        saw_bounds = true;
        if (*n > 0) in.notes.push_back(fmt::format("nccl-tests: {} out-of-bounds values (FAILED)", *n));
      } else if (starts_with(l, "# Avg bus bandwidth")) {
        const auto colon = l.find(':');
        const auto v = colon == std::string_view::npos ? std::vector<std::string_view>{} : split_words(l.substr(colon + 1));
        const auto bw = v.empty() ? std::nullopt : parse_number(v[0]);
        if (!bw || *bw < 0) src.fail(no, "\"Avg bus bandwidth\" without a number");
        if (!saw_bounds) src.fail(no, "\"Avg bus bandwidth\" before \"Out of bounds values\" (a mixed-up footer)");
        avg_bus = *bw;
        saw_avg = true;
        // nccl-tests averages busbw over every half it printed: the footer holds the table to account.
        const double mean = n_bus ? sum_bus / static_cast<double>(n_bus) : 0;
        if (std::fabs(mean - avg_bus) > 0.006 + 1e-5 * avg_bus)
          src.fail(no, fmt::format("Avg bus bandwidth {} is not the table's mean busbw {:.4f}: a line was cut, added or edited", avg_bus, mean));
        at = At::done;
      } else if (comment) {
        src.fail(no, fmt::format("{} inside the footer (expected \"Avg bus bandwidth\")", quote_input(l)));
      }
      continue;
    }
    if (at == At::done) {
      if (starts_with(l, "# Collective test concluded:")) {
        const auto name = std::string(trimmed(l.substr(28)));
        if (!program.empty() && name != program)
          src.fail(no, fmt::format("the log concludes {} but started {} (two logs joined?)", quote_input(name), quote_input(program)));
      } else if (comment && (w.size() >= 2 && (w[1] == "nThread" || w[1] == "Rank" || w[1] == "size"))) {
        src.fail(no, "a second run after the footer: import one nccl-tests run per file");
      }
    }
  }
  const std::size_t end = lines.size();
  if (at == At::preamble) {
    if (!iters_line && in.ranks.empty()) src.fail(end, "no nccl-tests header (\"# nThread ...\") or table: not nccl-tests output");
    src.fail(end, "the log ends before its table (no \"out-of-place ... in-place\" banner)");
  }
  if (at == At::banner || at == At::units) src.fail(end, "the log ends inside the table's header (truncated)");
  if (in.rows.empty()) src.fail(columns_line ? columns_line : end, "the table has no size lines");
  if (!saw_avg) src.fail(end, "the log ends before its footer (\"# Avg bus bandwidth\"): truncated");
  if (!in.tool_version) in.missing.push_back("tool version: nccl-tests before 2.18 does not print it");
  in.notes.push_back(fmt::format("nccl-tests' Avg bus bandwidth: {} GB/s", avg_bus));
  note_nccl_tests_missing(in);
  return in;
}

}  // namespace gpuscale
