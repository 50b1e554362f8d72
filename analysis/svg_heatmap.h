#pragma once
// A pair matrix as an inline SVG heatmap (fleet reports, issue 14): members labelled on both axes, a
// colour scale with a legend giving the numeric range and the unit, unmeasured cells in grey, outlier
// pairs outlined and suspect members' labels in red with a marker. Every text is escaped. The SVG
// stays bounded for large matrices: up to kHeatmapMaxSide members per side are drawn one cell each;
// above that, blocks of b x b pairs are drawn as one cell showing the lowest of them (so a slow pair
// still shows), and axis labels are thinned to what fits (suspect members are always labelled).
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuscale {

inline constexpr std::size_t kHeatmapMaxSide = 128;

struct Heatmap {
  std::string title, unit, note;
  std::vector<std::pair<std::string, std::string>> data;    // extra data-* attributes
  std::vector<std::string> labels;                          // M members: rows top to bottom, columns left to right
  std::vector<std::vector<std::optional<double>>> values;   // M x M, row i column j; nullopt: not measured
  std::vector<bool> suspect;                                // per member (may be empty)
  std::vector<std::pair<std::size_t, std::size_t>> outlier_cells;  // (row, column) cells to outline
  // The colour scale's (low, high); by default the matrix's own range. Heatmaps drawn side by side
  // (each node's GPU pairs) share one, so a slow node shows dark next to its peers.
  std::optional<std::pair<double, double>> range;
};

// <svg data-chart="heatmap" ...>; a heatmap whose values are not M x M draws "no data".
std::string render_heatmap(const Heatmap& h);

}  // namespace gpuscale
