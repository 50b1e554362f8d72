#pragma once
// The fleet section in HTML (fleet_html.cpp): its own file for the heatmaps and bars; fleet_section()
// (fleet_text.cpp) takes it with the text and Markdown.
#include <string>

#include "analysis/report.h"

namespace gpuscale {

std::string fleet_html(const FileReport& f);  // "" when the file has no fleet data

}  // namespace gpuscale
