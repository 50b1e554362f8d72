#include "text/text_width.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace gpuscale {

std::size_t columns_from(const char* env) {
  if (env == nullptr || *env == '\0') return kDefaultColumns;
  unsigned long long v = 0;
  const char* end = env + std::strlen(env);
  const auto [p, ec] = std::from_chars(env, end, v);
  if (ec != std::errc() || p != end) return kDefaultColumns;
  return static_cast<std::size_t>(std::clamp<unsigned long long>(v, kMinColumns, kMaxColumns));
}

std::size_t terminal_columns() { return columns_from(std::getenv("COLUMNS")); }

std::size_t width_from_columns(const char* columns) { return std::max(columns_from(columns), kMinWidth); }

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad_right(std::string_view s, std::size_t w) {
  const auto n = display_width(s);
  return std::string(s) + std::string(n < w ? w - n : 0, ' ');
}

std::string pad_left(std::string_view s, std::size_t w) {
  const auto n = display_width(s);
  return std::string(n < w ? w - n : 0, ' ') + std::string(s);
}

namespace {
// The byte length of s's first `cols` code points.
std::size_t prefix_bytes(std::string_view s, std::size_t cols) {
  std::size_t i = 0, seen = 0;
  while (i < s.size()) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == cols) break;
      ++seen;
    }
    ++i;
  }
  return i;
}
}  // namespace

std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent) {
  // Leading spaces stay (an indented first line); the words after them are wrapped.
  const std::size_t lead = std::min(text.find_first_not_of(' '), text.size());
  std::vector<std::string_view> words;
  for (std::size_t i = lead; i < text.size();) {
    const auto j = std::min(text.find(' ', i), text.size());
    if (j > i) words.push_back(text.substr(i, j - i));
    i = j + 1;
  }
  const std::size_t ind = std::min(display_width(indent), width > 1 ? width - 1 : 0);
  std::string out, line(std::min(lead, width > 1 ? width - 1 : 0), ' ');
  std::size_t used = line.size();
  auto flush = [&] {
    out += line + "\n";
    line = std::string(indent.substr(0, prefix_bytes(indent, ind)));
    used = ind;
  };
  bool fresh = true;  // nothing but the indent on the line yet
  // Each step scans at most a line's worth of a word: a huge word (a hostile file's string) is linear.
  for (auto w : words) {
    for (;;) {
      const std::size_t sep = fresh ? 0 : 1;
      const std::size_t room = used + sep < width ? width - used - sep : 0;
      if (prefix_bytes(w, room) == w.size()) {  // fits on this line
        if (!fresh) line += ' ';
        line += w;
        used += sep + display_width(w);
        fresh = false;
        break;
      }
      if (!fresh) {
        flush();
        fresh = true;
        continue;
      }
      const auto cut = prefix_bytes(w, width - used);  // a word longer than a whole line
      line += w.substr(0, cut);
      w.remove_prefix(cut);
      flush();
    }
  }
  if (!fresh || out.empty()) out += line + "\n";
  return out;
}

}  // namespace gpuscale
