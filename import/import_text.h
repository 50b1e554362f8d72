#pragma once
// An input file as the parsers read it: its bytes checked once (not empty, not too large, no NUL byte,
// valid UTF-8), split into lines numbered from 1, and the one way a parser refuses it:
// "FILE:LINE: problem", exit 2 (core/error.h), with the file name and any quoted text made safe for a
// terminal. Nothing is written when a parser refuses (cli/cmd_import.cpp writes only at the end).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

inline constexpr std::uintmax_t kMaxImportBytes = 256ULL << 20;

class ImportText {
 public:
  // Reads `path`; throws gpuscale::Error naming the file (and the line, for bad encoding).
  explicit ImportText(const std::string& path);
  // Text already in memory (tests), `name` standing for the file.
  ImportText(std::string name, std::string text);

  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  const std::vector<std::string_view>& lines() const { return lines_; }

  // Throws gpuscale::Error("FILE:LINE: what"); line 0 names the file alone.
  [[noreturn]] void fail(std::size_t line, std::string_view what) const;

 private:
  void check_and_split();
  std::string name_;
  std::string text_;
  std::vector<std::string_view> lines_;
};

// Helpers the parsers share. Each returns nullopt when the text is not wholly that kind of number.
std::optional<long long> parse_integer(std::string_view s);
std::optional<double> parse_number(std::string_view s);  // finite, plain decimal or exponent form
std::vector<std::string_view> split_words(std::string_view line);      // on runs of spaces and tabs
std::vector<std::string_view> split_on(std::string_view line, char sep);  // exact, empty fields kept
std::string_view trimmed(std::string_view s);
// `s` quoted for a message: terminal-safe, cut to a short length.
std::string quote_input(std::string_view s);

}  // namespace gpuscale
