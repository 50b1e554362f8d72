#pragma once
// gpuscale report: what one result file says, in each output format. A FileReport is computed once
// per input (stragglers at the chosen threshold, the projection) and rendered as terminal text,
// Markdown, CSV, Prometheus text (node_exporter's textfile collector) or one self-contained HTML page.
// Text, Markdown and HTML open with the verdict (and the fleet's heatmaps in HTML), then scaling, then
// the detail (docs/analysis.md).
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

// Terminal text: every line within `width` columns (0: no limit, --wide) but the nccl-tests tables'.
std::string report_text(const FileReport& r, std::size_t width = kDefaultColumns);
std::string report_markdown(const std::vector<FileReport>& files);
std::string report_csv(const std::vector<FileReport>& files);
// Throws gpuscale::Error when two inputs would give the same series (e.g. two runs of one cluster).
std::string report_openmetrics(const std::vector<FileReport>& files);
std::string report_html(const std::vector<FileReport>& files);
// The opening of a self-contained page in the report's style, to "</h1>" and a "Made by" line; close it
// with "</body></html>\n".
std::string html_page_head(const std::string& title, const std::string& made_from);

// The fleet section of each format (analysis/report_fleet_*.cpp); empty when the file has no fleet data.
std::string fleet_text(const FileReport& r);
std::string fleet_markdown(const FileReport& r);
std::string fleet_html(const FileReport& r);

// The training-step section (analysis/report_training.cpp): per series, its phases per GPU count (a
// stacked bar in HTML) and the max-useful-GPUs line; empty when the file has no train-step rows.
std::string training_markdown(const FileReport& r);
std::string training_html(const FileReport& r);
// The burn-in's drift, silent data corruption and capacity (report_burn.cpp); "" without a burn-in.
std::string burn_markdown(const FileReport& r);
std::string burn_html(const FileReport& r);

}  // namespace gpuscale
