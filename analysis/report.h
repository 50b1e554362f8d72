#pragma once
// gpuscale report: what one result file says, whatever the format. A FileReport is computed once per
// input (stragglers at the chosen threshold, the projection) and rendered by each format of
// analysis/reporter.h: terminal text, Markdown, CSV, Prometheus text (node_exporter's textfile collector),
// one self-contained HTML page. Text, Markdown and HTML open with the verdict (and the fleet's heatmaps
// in HTML), then scaling, then the detail (docs/analysis.md).
#include <string>
#include <vector>

#include "analysis/fleet_view.h"
#include "analysis/projection.h"
#include "analysis/result_set.h"
#include "analysis/stragglers.h"
#include "text/text_table.h"
#include "analysis/train_scaling.h"
#include "analysis/verdict.h"

namespace gpuscale {

struct FileReport {
  FileReport() = default;
  FileReport(FileReport&&) = default;
  FileReport& operator=(FileReport&&) = default;
  FileReport(const FileReport&) = delete;  // stragglers point into run.rows

  LoadedResult run;
  double straggler_threshold = kDefaultStragglerThreshold;
  std::vector<Straggler> stragglers;
  Projection projection;
  std::vector<TrainScaling> training;  // train-step series: phases per count, max useful GPUs
  FleetView fleet;  // groups, pair matrices and outliers (empty for files without fleet data)
  RunVerdict verdict;  // what every format opens with (analysis/verdict.h)
};

FileReport make_file_report(LoadedResult run, double straggler_threshold);

// One line per fact of where and how the run measured (cluster, time, tool, backend, devices, hosts,
// MPI, software, Slurm job, links, validity): the environment summary of every format.
std::vector<std::pair<std::string, std::string>> environment_summary(const LoadedResult& run);

// The opening of a self-contained page in the report's style, to "</h1>" and a "Made by" line; close it
// with "</body></html>\n" (analysis/formats/html.cpp).
std::string html_page_head(const std::string& title, const std::string& made_from);

}  // namespace gpuscale
