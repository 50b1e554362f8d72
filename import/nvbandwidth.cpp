// nvbandwidth's text and --json output (import/nvbandwidth.h).
#include "import/nvbandwidth.h"

#include <fmt/format.h>

#include "import/nvbandwidth_cases.h"
#include "results/result_io.h"

namespace gpuscale {
namespace {

using nlohmann::json;

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

ImportedInput base(const ImportText& src, const char* format) {
  ImportedInput in;
  in.file = src.name();
  in.format = format;
  in.tool = "nvbandwidth";
  in.backend = "cuda";
  in.command_line_note = "nvbandwidth does not print its command line";
  note_nvbandwidth_missing(in);
  return in;
}

// "NAME (0000000a:1b:00)": the name and the bus id nvbandwidth prints after it.
void name_and_bus(std::string_view s, ImportedRank& r) {
  const auto open = s.rfind(" (");
  if (open != std::string_view::npos && s.back() == ')') {
    r.device_name = std::string(s.substr(0, open));
    r.pci_bus_id = std::string(s.substr(open + 2, s.size() - open - 3));
  } else {
    r.device_name = std::string(s);
  }
}

// A cell as printed: "N/A" (not measured) or a non-negative number.
std::optional<double> cell(std::string_view w, const NvbWhere& where, std::size_t line, int r, int c) {
  if (w == "N/A") return std::nullopt;
  const auto v = parse_number(w);
  if (!v || *v < 0) where.fail(line, fmt::format("row {} column {}: {} is not a bandwidth (a number or N/A)", r, c, quote_input(w)));
  return v;
}

// A "Device i: ..." or "Process i (host): device d: ..." line of the header.
void device_line(ImportedInput& in, const ImportText& src, std::size_t no, std::string_view l, const std::string& host, bool process) {
  ImportedRank r;
  const auto colon = l.find(':');
  const auto words = split_words(l.substr(0, colon));
  const auto idx = words.size() >= 2 ? parse_integer(words[1]) : std::nullopt;
  if (colon == std::string_view::npos || !idx) src.fail(no, fmt::format("{} is not nvbandwidth's device line", quote_input(l)));
  if (*idx != static_cast<long long>(in.ranks.size()))
    src.fail(no, fmt::format("{} {} where {} {} was expected (a mixed-up or cut header)", words[0], *idx, words[0], in.ranks.size()));
  r.rank = static_cast<int>(*idx);
  std::string_view rest = trimmed(l.substr(colon + 1));
  if (process) {
    const auto open = l.find('('), close = l.find(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close > colon || !starts_with(rest, "device "))
      src.fail(no, fmt::format("{} is not nvbandwidth's \"Process i (host): device d: NAME\" line", quote_input(l)));
    r.host = std::string(l.substr(open + 1, close - open - 1));
    const auto c2 = rest.find(':');
    const auto dev = parse_integer(trimmed(rest.substr(7, c2 == std::string_view::npos ? 0 : c2 - 7)));
    if (c2 == std::string_view::npos || !dev || *dev < 0) src.fail(no, fmt::format("{}: the device is not a GPU ordinal", quote_input(l)));
    r.device = static_cast<int>(*dev);
    rest = trimmed(rest.substr(c2 + 1));
  } else {
    r.host = host;
    r.device = r.rank;
  }
  name_and_bus(rest, r);
  in.ranks.push_back(std::move(r));
}

[[noreturn]] void json_fail(const ImportText& src, const std::string& at, std::string_view what) { NvbWhere{src, at}.fail(0, what); }

}  // namespace

bool looks_like_nvbandwidth_text(const ImportText& src) {
  for (const auto l : src.lines())
    if (!trimmed(l).empty()) return starts_with(trimmed(l), "nvbandwidth Version: ");
  return false;
}

bool looks_like_nvbandwidth_json(const ImportText& src) {
  const auto& t = src.text();
  const auto b = t.find_first_not_of(" \t\r\n");
  return b != std::string::npos && t[b] == '{' && t.find("\"nvbandwidth\"") != std::string::npos;
}

ImportedInput read_nvbandwidth_text(const ImportText& src) {
  ImportedInput in = base(src, "nvbandwidth");
  const NvbWhere where{src, ""};
  const auto& lines = src.lines();
  bool multinode = false, seen_testcase = false;
  std::string host;
  const NvbCase* current = nullptr;
  std::size_t running = 0;
  std::vector<NvbMatrix> matrices;
  auto close = [&] {
    if (!current) return;
    if (matrices.empty()) src.fail(running, fmt::format("{} has no matrix and no error: the output was cut", current->key));
    add_nvbandwidth_rows(in, *current, matrices, multinode, where);
    current = nullptr;
    matrices.clear();
  };
  std::size_t i = 0;
  auto at_end = [&] { return i >= lines.size(); };
  for (; i < lines.size(); ++i) {
    const std::size_t no = i + 1;
    const auto l = trimmed(lines[i]);
    if (l.empty()) continue;
    if (!seen_testcase && !starts_with(l, "Running ")) {
      if (!in.tool_version) {
        if (!starts_with(l, "nvbandwidth Version: ")) src.fail(no, "the output does not begin with \"nvbandwidth Version:\"");
        in.tool_version = std::string(trimmed(l.substr(21)));
      } else if (starts_with(l, "Built from Git version: ")) {
        in.notes.push_back(fmt::format("built from git version {}", trimmed(l.substr(24))));
      } else if (starts_with(l, "MPI version: ")) {
        multinode = true;
      } else if (starts_with(l, "CUDA Driver Version: ")) {
        in.notes.push_back(fmt::format("CUDA version of the driver: {}", trimmed(l.substr(21))));
      } else if (starts_with(l, "Driver Version: ")) {
        in.software["driver"] = std::string(trimmed(l.substr(16)));
      } else if (starts_with(l, "Device ") && l.find(':') != std::string_view::npos) {
        device_line(in, src, no, l, host, false);
      } else if (starts_with(l, "Process ")) {
        multinode = true;
        device_line(in, src, no, l, host, true);
      } else if (starts_with(l, "CUDA Runtime Version: ") || starts_with(l, "NOTE:") || starts_with(l, "Performance can vary") ||
                 starts_with(l, "Warning:") || starts_with(l, "NOTE ")) {
        if (starts_with(l, "NOTE: You have chosen") || starts_with(l, "Warning:")) in.notes.push_back(std::string(l));
      } else if (in.ranks.empty() && host.empty()) {
        host = std::string(l);  // the one line nvbandwidth prints above "Device 0": the host's name
      } else {
        src.fail(no, fmt::format("{} is not a line of nvbandwidth's header (a mixed-up or edited header)", quote_input(l)));
      }
      continue;
    }
    if (!seen_testcase && in.ranks.empty()) src.fail(no, "a testcase before any \"Device\" or \"Process\" line (a mixed-up or cut header)");
    seen_testcase = true;
    if (starts_with(l, "Running ")) {
      close();
      if (l.back() != '.') src.fail(no, fmt::format("{} is not \"Running <testcase>.\"", quote_input(l)));
      const auto key = l.substr(8, l.size() - 9);
      current = nvbandwidth_case(key);
      if (!current) src.fail(no, fmt::format("unknown testcase {}: not one nvbandwidth v0.8 has", quote_input(key)));
      running = no;
      continue;
    }
    if (starts_with(l, "Waived:") || starts_with(l, "ERROR:") || starts_with(l, "Error:")) {
      // Waived is printed instead of Running; an error ends the running testcase without results.
      if (current && matrices.empty()) {
        in.notes.push_back(fmt::format("{}: {}", current->key, l));
        current = nullptr;
      } else {
        in.notes.push_back(std::string(l));
      }
      continue;
    }
    if (starts_with(l, "MIN ") || starts_with(l, "MAX ") || starts_with(l, "AVG ")) continue;  // -v
    if (starts_with(l, "NOTE: The reported") || starts_with(l, "Performance can vary")) continue;   // printed last
    if (!current) src.fail(no, fmt::format("{} outside a testcase (no \"Running\" line above it)", quote_input(l)));
    // A matrix: its description, the column header, its rows, a blank line, its sum.
    NvbMatrix m;
    m.description = std::string(l);
    m.line = no;
    m.cell_resolution = 0.005;
    ++i;
    const auto head = at_end() ? std::vector<std::string_view>{} : split_words(lines[i]);
    for (std::size_t k = 0; k < head.size(); ++k)
      if (parse_integer(head[k]) != static_cast<long long>(k))
        src.fail(i + 1, fmt::format("column header {} where {} was expected (a matrix header of column indices)", quote_input(head[k]), k));
    if (head.empty()) src.fail(std::min(i + 1, lines.size()), fmt::format("{} is not followed by the matrix's column header", quote_input(l)));
    m.columns = static_cast<int>(head.size());
    for (++i; !at_end() && !trimmed(lines[i]).empty(); ++i) {
      const auto w = split_words(lines[i]);
      if (parse_integer(w[0]) != m.rows)
        src.fail(i + 1, fmt::format("row {} where row {} was expected (a cut, repeated or reordered row)", quote_input(w[0]), m.rows));
      if (static_cast<int>(w.size()) != m.columns + 1)
        src.fail(i + 1, fmt::format("{} cells, the header has {} columns (a cut or edited row)", w.size() - 1, m.columns));
      for (int c = 0; c < m.columns; ++c) m.cells.push_back(cell(w[static_cast<std::size_t>(c) + 1], where, i + 1, m.rows, c));
      m.row_lines.push_back(i + 1);
      ++m.rows;
    }
    if (m.rows == 0) src.fail(std::min(i + 1, lines.size()), "a matrix with no rows: the output was cut");
    while (!at_end() && trimmed(lines[i]).empty()) ++i;
    if (at_end()) src.fail(lines.size(), fmt::format("the matrix of line {} has no SUM line: the output was cut", m.line));
    auto w = split_words(lines[i]);
    if (w.size() >= 2 && w[0] == "&&&&" && w[1] == "PERF") w.erase(w.begin());  // --perfFormatter
    const auto s = w.size() >= 3 ? parse_number(w[2]) : std::nullopt;
    if ((w[0] != "SUM" && w[0] != "PERF") || !s)
      src.fail(i + 1, fmt::format("{} where the matrix's \"SUM <testcase> <GB/s>\" line was expected (a cut or edited matrix)", quote_input(lines[i])));
    m.key = std::string(w[1]);
    m.sum = *s;
    matrices.push_back(std::move(m));
  }
  close();
  if (in.ranks.empty()) src.fail(lines.size(), "no \"Device\" or \"Process\" line: the output names no GPU (truncated?)");
  if (!seen_testcase) src.fail(lines.size(), "no testcase: the output ends before its results (truncated?)");
  if (in.rows.empty()) src.fail(lines.size(), "no testcase gpuscale can import (every one waived, failed or without a counterpart)");
  if (multinode) in.notes.push_back("run under MPI: multinode testcases' indices are processes, the others' GPUs of rank 0's host");
  return in;
}

ImportedInput read_nvbandwidth_json(const ImportText& src) {
  ImportedInput in = base(src, "nvbandwidth-json");
  const json doc = parse_json_text(src.text(), src.name());
  if (!doc.is_object() || !doc.contains("nvbandwidth") || !doc["nvbandwidth"].is_object()) json_fail(src, "/nvbandwidth", "not an object: not nvbandwidth's --json output");
  const json& root = doc["nvbandwidth"];
  auto text = [&](const char* key, bool need) -> std::optional<std::string> {
    if (!root.contains(key)) {
      if (need) json_fail(src, "/nvbandwidth", fmt::format("no \"{}\"", key));
      return std::nullopt;
    }
    if (!root[key].is_string()) json_fail(src, fmt::format("/nvbandwidth/{}", key), "not a string");
    return root[key].get<std::string>();
  };
  in.tool_version = text("version", true);
  if (auto g = text("git_version", false)) in.notes.push_back(fmt::format("built from git version {}", *g));
  if (auto d = text("Driver Version", false)) in.software["driver"] = *d;
  if (root.contains("CUDA Runtime Version")) in.notes.push_back(fmt::format("CUDA version of the driver: {}", root["CUDA Runtime Version"].dump()));
  if (auto w = text("warning", false)) in.notes.push_back(*w);
  if (auto e = text("error", false)) in.notes.push_back(fmt::format("nvbandwidth error: {}", *e));
  const json& list = root.contains("GPU Device list") ? root["GPU Device list"] : json();
  if (!list.is_array() || list.empty()) json_fail(src, "/nvbandwidth", "no \"GPU Device list\": the output names no GPU");
  for (std::size_t k = 0; k < list.size(); ++k) {
    const std::string at = fmt::format("/nvbandwidth/GPU Device list/{}", k);
    if (!list[k].is_string()) json_fail(src, at, "not a string");
    const std::string s = list[k].get<std::string>();
    // "i: NAME (bus id): (host)"
    const auto colon = s.find(": "), tail = s.rfind("): (");
    const auto idx = colon == std::string::npos ? std::nullopt : parse_integer(s.substr(0, colon));
    if (!idx || tail == std::string::npos || tail < colon || s.back() != ')')
      json_fail(src, at, fmt::format("{} is not \"i: NAME (bus id): (host)\"", quote_input(s)));
    if (*idx != static_cast<long long>(k)) json_fail(src, at, fmt::format("device {} where device {} was expected (a mixed-up list)", *idx, k));
    ImportedRank r;
    r.rank = r.device = static_cast<int>(k);
    r.host = s.substr(tail + 4, s.size() - tail - 5);
    name_and_bus(std::string_view(s).substr(colon + 2, tail + 1 - colon - 2), r);
    in.ranks.push_back(std::move(r));
  }
  const json& cases = root.contains("testcases") ? root["testcases"] : json();
  if (!cases.is_array() || cases.empty()) json_fail(src, "/nvbandwidth", "no \"testcases\": the output ends before its results (truncated?)");
  for (std::size_t t = 0; t < cases.size(); ++t) {
    const std::string at = fmt::format("/nvbandwidth/testcases/{}", t);
    const json& tc = cases[t];
    if (!tc.is_object() || !tc.contains("name") || !tc["name"].is_string() || !tc.contains("status") || !tc["status"].is_string())
      json_fail(src, at, "not a testcase (an object with \"name\" and \"status\")");
    const std::string name = tc["name"].get<std::string>(), status = tc["status"].get<std::string>();
    const NvbCase* c = nvbandwidth_case(name);
    if (!c) json_fail(src, at + "/name", fmt::format("unknown testcase {}: not one nvbandwidth v0.8 has", quote_input(name)));
    if (status != "Passed") {
      in.notes.push_back(fmt::format("{}: {}{}", name, status, tc.contains("error") ? ": " + tc["error"].dump() : ""));
      continue;
    }
    if (!tc.contains("bandwidth_matrix") || !tc["bandwidth_matrix"].is_array() || tc["bandwidth_matrix"].empty())
      json_fail(src, at, "passed, but no \"bandwidth_matrix\" (a cut testcase)");
    if (!tc.contains("sum") || !tc["sum"].is_number()) json_fail(src, at, "no \"sum\" number (a cut testcase)");
    if (!tc.contains("bandwidth_description") || !tc["bandwidth_description"].is_string()) json_fail(src, at, "no \"bandwidth_description\"");
    const json& rows = tc["bandwidth_matrix"];
    // A bidirectional testcase's three matrices are stacked in one; only the last keeps its sum.
    const std::size_t parts = c->bidirectional_matrices ? 3 : 1;
    if (rows.size() % parts) json_fail(src, at + "/bandwidth_matrix", fmt::format("{} rows, not {} stacked matrices (a cut matrix)", rows.size(), parts));
    std::vector<NvbMatrix> matrices(parts);
    const std::size_t per = rows.size() / parts;
    for (std::size_t r = 0; r < rows.size(); ++r) {
      NvbMatrix& m = matrices[r / per];
      const std::string here = fmt::format("{}/bandwidth_matrix/{}", at, r);
      const NvbWhere where{src, here};
      if (!rows[r].is_array() || rows[r].empty()) json_fail(src, here, "not a row of cells");
      if (m.rows == 0) m.columns = static_cast<int>(rows[r].size());
      if (static_cast<int>(rows[r].size()) != m.columns)
        json_fail(src, here, fmt::format("{} cells, the first row has {} (a cut or edited row)", rows[r].size(), m.columns));
      for (std::size_t k = 0; k < rows[r].size(); ++k) {
        if (!rows[r][k].is_string()) json_fail(src, fmt::format("{}/{}", here, k), fmt::format("{} is not a printed bandwidth (a string)", quote_input(rows[r][k].dump())));
        m.cells.push_back(cell(rows[r][k].get<std::string>(), where, 0, m.rows, static_cast<int>(k)));
      }
      ++m.rows;
    }
    for (auto& m : matrices) {
      m.description = tc["bandwidth_description"].get<std::string>();
      m.cell_resolution = 5e-6;  // "%g": six significant digits
      m.relative_resolution = true;
    }
    matrices.back().sum = tc["sum"].get<double>();
    add_nvbandwidth_rows(in, *c, matrices, false, NvbWhere{src, at});
  }
  if (in.rows.empty()) json_fail(src, "/nvbandwidth/testcases", "no testcase gpuscale can import (every one waived, failed or without a counterpart)");
  return in;
}

}  // namespace gpuscale
