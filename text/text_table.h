#pragma once
// Terminal tables and text that fit a width (issue 16: every line of the run summary and the report
// fits the terminal, 80 columns unless COLUMNS says otherwise, apart from the nccl-tests tables).
// Pure functions: the width is a parameter, 0 meaning no limit (gpuscale report --wide).
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "text/text_width.h"  // kDefaultColumns, terminal_columns: COLUMNS read once

namespace gpuscale {


// How the device of a rank is called in text: "GPU" for GPU backends, "rank" for the CPU backend
// (its ranks are processes, not devices). `backend` is the file's "backend" field.
struct DeviceWord {
  std::string one, many;  // "GPU"/"GPUs", "rank"/"ranks"
  std::string count(long long n) const;  // "1 GPU", "4 ranks"
};
DeviceWord device_word(const std::string& backend);

// What a terminal table is drawn for: the width (0: no limit) and the device word.
struct TextStyle {
  std::size_t width = kDefaultColumns;
  DeviceWord device = device_word("");
};

struct TextColumn {
  std::string header;
  bool right = true;  // right-aligned (numbers) or left-aligned (words)
  bool key = false;   // repeated in every block when the columns are split into blocks
};

// A table whose column 0 is its label (always repeated). Within `width` (0: no limit) every line
// starts with `indent` spaces and fits: a label too long for its column goes on a line of its own
// above the rest of its row; columns that do not fit beside each other are split into blocks, one
// under the other, each repeating the label and the key columns. A cell that fits nowhere is wrapped.
struct TextTable {
  std::vector<TextColumn> columns;
  std::vector<std::vector<std::string>> rows;  // one cell per column
  std::string render(std::size_t width, std::size_t indent = 2) const;
};

// Free text made to fit: every line longer than `width` (0: no limit) is broken at spaces, its
// continuation lines indented `hang` spaces (0: 4 more than the line itself); a word longer than the
// room is split.
std::string fit_lines(const std::string& text, std::size_t width, std::size_t hang = 0);

// Numbers of one column in one format: fixed-point with the decimals that give the smallest
// nonzero magnitude `digits` significant digits (at most `max_decimals`), never an exponent.
int column_decimals(const std::vector<double>& values, int digits = 4, int max_decimals = 6);
std::string fixed_text(double v, int decimals);

}  // namespace gpuscale
