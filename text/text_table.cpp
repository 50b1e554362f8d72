#include "text/text_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace gpuscale {
namespace {

constexpr std::size_t kGap = 2;        // spaces between columns
constexpr std::size_t kMinLabel = 12;  // a label column is not squeezed below this

std::string pad(const std::string& s, std::size_t w, bool right) {
  if (s.size() >= w) return s;
  return right ? std::string(w - s.size(), ' ') + s : s + std::string(w - s.size(), ' ');
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// One block: the columns it shows (in table order) and its label width.
struct Block {
  std::vector<std::size_t> cols;
  std::size_t label = 0;
};

std::size_t block_width(const Block& b, const std::vector<std::size_t>& nat) {
  std::size_t w = b.label;
  for (std::size_t c : b.cols)
    if (c != 0) w += kGap + nat[c];
  return w;
}

// The label width that fits beside the block's other columns: its natural width when there is room,
// else what is left (not below kMinLabel, never above the natural width).
void fit_label(Block& b, const std::vector<std::size_t>& nat, std::size_t avail) {
  b.label = 0;
  const std::size_t rest = block_width(b, nat);
  const std::size_t room = avail > rest ? avail - rest : 0;
  b.label = std::min(nat[0], std::max(room, std::min(nat[0], kMinLabel)));
}

std::vector<Block> plan_blocks(const std::vector<TextColumn>& cols, const std::vector<std::size_t>& nat,
                               std::size_t avail) {
  Block all;
  for (std::size_t c = 0; c < cols.size(); ++c) all.cols.push_back(c);
  fit_label(all, nat, avail);
  if (block_width(all, nat) <= avail) return {all};
  // Split: every block holds the label and the key columns, then as many others as fit.
  Block keys;
  keys.cols.push_back(0);
  for (std::size_t c = 1; c < cols.size(); ++c)
    if (cols[c].key) keys.cols.push_back(c);
  keys.label = std::min(nat[0], kMinLabel);
  std::vector<Block> out;
  Block cur = keys;
  bool any = false;
  for (std::size_t c = 1; c < cols.size(); ++c) {
    if (cols[c].key) continue;
    Block next = cur;
    next.cols.push_back(c);
    std::sort(next.cols.begin(), next.cols.end());
    if (any && block_width(next, nat) > avail) {
      out.push_back(cur);
      cur = keys;
      cur.cols.push_back(c);
      std::sort(cur.cols.begin(), cur.cols.end());
    } else {
      cur = next;
    }
    any = true;
  }
  out.push_back(cur);
  for (auto& b : out) fit_label(b, nat, avail);
  return out;
}

// Breaks one line at spaces (or inside a word too long for the room) into lines of at most width.
void wrap_line(const std::string& line, std::size_t width, std::string& out, std::size_t hang_at = 0) {
  if (width == 0 || line.size() <= width) {
    out += line + "\n";
    return;
  }
  const std::size_t lead = line.find_first_not_of(' ') == std::string::npos ? 0 : line.find_first_not_of(' ');
  const std::size_t hang = std::min(hang_at ? hang_at : lead + 4, width / 2);
  std::string rest = line;
  std::string prefix;  // the indent of continuation lines
  bool first = true;
  while (!rest.empty()) {
    const std::size_t room = width - (first ? 0 : prefix.size());
    if (rest.size() <= room) {
      out += (first ? "" : prefix) + rest + "\n";
      break;
    }
    std::size_t cut = rest.rfind(' ', room);
    const std::size_t floor = first ? lead : 0;  // never break inside the line's own indent
    if (cut == std::string::npos || cut <= floor) cut = room;
    out += (first ? "" : prefix) + rstrip(rest.substr(0, cut)) + "\n";
    rest = rest.substr(cut);
    const auto start = rest.find_first_not_of(' ');
    rest = start == std::string::npos ? "" : rest.substr(start);
    if (first) prefix = std::string(hang, ' ');
    first = false;
  }
}

}  // namespace


std::string DeviceWord::count(long long n) const { return fmt::format("{} {}", n, n == 1 ? one : many); }

DeviceWord device_word(const std::string& backend) {
  if (backend == "cpu") return {"rank", "ranks"};
  return {"GPU", "GPUs"};
}

std::string TextTable::render(std::size_t width, std::size_t indent) const {
  if (columns.empty()) return "";
  std::vector<std::size_t> nat(columns.size(), 0);
  for (std::size_t c = 0; c < columns.size(); ++c) {
    nat[c] = columns[c].header.size();
    for (const auto& row : rows)
      if (c < row.size()) nat[c] = std::max(nat[c], row[c].size());
  }
  const std::size_t avail = width == 0 ? static_cast<std::size_t>(-1) : (width > indent ? width - indent : 1);
  const std::string lead(indent, ' ');
  std::string out;
  bool first_block = true;
  for (const auto& b : plan_blocks(columns, nat, avail)) {
    if (!first_block) out += "\n";
    first_block = false;
    auto line = [&](const std::vector<std::string>& cells, bool blank_label) {
      std::string s = lead + pad(blank_label ? "" : cells[0], b.label, columns[0].right);
      for (std::size_t c : b.cols)
        if (c != 0) s += std::string(kGap, ' ') + pad(c < cells.size() ? cells[c] : "", nat[c], columns[c].right);
      wrap_line(rstrip(s), width, out);
    };
    std::vector<std::string> head;
    for (const auto& c : columns) head.push_back(c.header);
    line(head, false);
    for (const auto& row : rows) {
      const bool own_line = !row.empty() && row[0].size() > b.label;
      if (own_line) wrap_line(lead + row[0], width, out);
      line(row, own_line);
    }
  }
  return out;
}

std::string fit_lines(const std::string& text, std::size_t width, std::size_t hang) {
  if (width == 0) return text;
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto nl = text.find('\n', start);
    const bool last = nl == std::string::npos;
    const std::string line = text.substr(start, last ? std::string::npos : nl - start);
    if (last) {  // no newline at the end: keep it so
      std::string piece;
      wrap_line(line, width, piece, hang);
      piece.pop_back();
      out += piece;
      break;
    }
    wrap_line(line, width, out, hang);
    start = nl + 1;
  }
  return out;
}

int column_decimals(const std::vector<double>& values, int digits, int max_decimals) {
  int decimals = 0;
  for (double v : values) {
    const double a = std::fabs(v);
    if (!(a > 0) || !std::isfinite(a)) continue;
    const int d = digits - 1 - static_cast<int>(std::floor(std::log10(a)));
    decimals = std::max(decimals, std::min(d, max_decimals));
  }
  return decimals;
}

std::string fixed_text(double v, int decimals) { return fmt::format("{:.{}f}", v, decimals); }

}  // namespace gpuscale
