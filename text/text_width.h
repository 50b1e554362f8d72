#pragma once
// Terminal text that fits a width: every output a person reads lays out to COLUMNS (default 80), whose
// text is parsed here and nowhere else (columns_from). The formatting functions take the width as a
// parameter; only the CLI and the run's summary read the environment.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuscale {

inline constexpr std::size_t kDefaultColumns = 80;
inline constexpr std::size_t kMinColumns = 40;     // narrower COLUMNS values are taken as this
inline constexpr std::size_t kMaxColumns = 1000;

// The width COLUMNS asks for: its number clamped to [kMinColumns, kMaxColumns]; kDefaultColumns when
// unset, empty or not a whole number.
std::size_t columns_from(const char* columns_env);
std::size_t terminal_columns();  // columns_from(getenv("COLUMNS"))

inline constexpr std::size_t kMinWidth = 64;  // the narrowest layout compare and check keep to
// compare and check's width: columns_from(columns), never below kMinWidth.
std::size_t width_from_columns(const char* columns);
// Columns a string takes on a terminal: its UTF-8 code points (the text is term_text'd already).
std::size_t display_width(std::string_view s);
// s padded with spaces to w columns, on the right (text) or on the left (numbers); never cut.
std::string pad_right(std::string_view s, std::size_t w);
std::string pad_left(std::string_view s, std::size_t w);
// Words of text wrapped to lines of at most width columns, each ending in '\n'; lines after the first
// start with indent. A word longer than a line (a path) is cut where the line ends.
std::string wrap_words(std::string_view text, std::size_t width, std::string_view indent = "");

}  // namespace gpuscale
