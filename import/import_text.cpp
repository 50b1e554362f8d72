// Reading an input file for import (import/import_text.h).
#include "import/import_text.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale {

ImportText::ImportText(const std::string& path) : name_(path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) fail(0, "no such file");
  if (!std::filesystem::is_regular_file(status)) fail(0, "not a regular file");
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(0, fmt::format("cannot read its size: {}", ec.message()));
  if (size > kMaxImportBytes) fail(0, fmt::format("{} bytes, more than the {} an input may have", size, kMaxImportBytes));
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(0, "cannot be opened");
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) fail(0, "cannot be read");
  text_ = buf.str();
  check_and_split();
}

ImportText::ImportText(std::string name, std::string text) : name_(std::move(name)), text_(std::move(text)) { check_and_split(); }

void ImportText::fail(std::size_t line, std::string_view what) const {
  if (line == 0) throw Error(fmt::format("{}: {}", terminal_safe(name_), what));
  throw Error(fmt::format("{}:{}: {}", terminal_safe(name_), line, what));
}

void ImportText::check_and_split() {
  if (text_.find_first_not_of(" \t\r\n") == std::string::npos) fail(0, "empty: no output to import");
  std::size_t start = 0, number = 1;
  while (start < text_.size()) {
    std::size_t end = text_.find('\n', start);
    if (end == std::string::npos) end = text_.size();
    std::string_view line(text_.data() + start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // a log copied through Windows
    if (line.find('\0') != std::string_view::npos) fail(number, "a NUL byte: binary data, not a tool's text output");
    if (utf8_escaped(line) != line) fail(number, "not UTF-8 text (a byte that is not part of a UTF-8 character)");
    for (char c : line)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        fail(number, fmt::format("a control character (0x{:02x}): not a tool's text output", static_cast<unsigned char>(c)));
    lines_.push_back(line);
    start = end + 1;
    ++number;
  }
}

std::optional<long long> parse_integer(std::string_view s) {
  long long v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_number(std::string_view s) {
  double v = 0;
  const char* b = s.data();
  if (!s.empty() && s.front() == '+') ++b;
  const auto [p, ec] = std::from_chars(b, s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

std::vector<std::string_view> split_on(std::string_view line, char sep) {
  std::vector<std::string_view> out;
  std::size_t b = 0;
  for (;;) {
    const auto e = line.find(sep, b);
    out.push_back(line.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b));
    if (e == std::string_view::npos) return out;
    b = e + 1;
  }
}

std::string_view trimmed(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string quote_input(std::string_view s) { return "'" + terminal_quote(s, 40) + "'"; }

}  // namespace gpuscale
