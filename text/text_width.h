#pragma once
// Terminal text that fits a width: the compare and check outputs lay out to COLUMNS (default 80). The
// formatting functions take the width as a parameter; only the CLI reads the environment.
#include <cstddef>
#include <string>
#include <string_view>

namespace gpuscale {

inline constexpr std::size_t kDefaultWidth = 80;
inline constexpr std::size_t kMinWidth = 64;  // the narrowest layout compare and check keep to

// COLUMNS as the CLI found it (nullptr: unset): a whole number, clamped to [kMinWidth, 1000]; else 80.
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
