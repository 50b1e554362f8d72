#pragma once
// A section of one file's report, as each prose format composes it: a format is one list of its
// sections in its own order (analysis/formats/). The sections that come from one analysis each (the
// fleet, the burn-in, the training step) say themselves in every document kind here, so every format
// shows the same facts and a format takes a section by one entry of its list. The row-per-line formats
// (CSV, OpenMetrics) have no sections: their rows carry what they export.
#include <string>

#include "analysis/report.h"
#include "text/text_table.h"

namespace gpuscale {

// A section in terminal text: every line within style.width (0: no limit), tables kept whole.
using TextSection = std::string (*)(const FileReport& r, const TextStyle& style);
// A section in Markdown or in HTML.
using DocumentPart = std::string (*)(const FileReport& r);

// One section in each kind; each gives "" for a file without its data.
struct ReportSection {
  TextSection text;
  DocumentPart markdown;
  DocumentPart html;
};

// The outlier hosts, the outliers, the slowest of each pair matrix and node group; heatmaps in HTML
// (analysis/sections/fleet_*.cpp).
const ReportSection& fleet_section();
// The burn-in's drift, silent data corruption and capacity (analysis/sections/burn.cpp).
const ReportSection& burn_section();
// Per train-step series, its phases per GPU count (a stacked bar in HTML) and the max-useful-GPUs line
// (analysis/sections/training.cpp).
const ReportSection& training_section();

}  // namespace gpuscale
