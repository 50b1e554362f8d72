#pragma once
// What the fleet outlier analysis decides outside the report: `gpuscale check --fail-on-outliers`
// (one failure per entry of analysis.outliers) and `gpuscale report --drain-list` (the hosts of
// analysis.outlier_hosts, for `scontrol update nodename=... state=drain`). Both refuse, with a
// gpuscale::Error (exit 2), a file that has no outlier analysis: its silence would read as "healthy".
#include <cstddef>
#include <string>
#include <vector>

#include "analysis/fleet_view.h"
#include "analysis/junit.h"

namespace gpuscale {

// One line naming an outlier, unescaped (escape where it is written):
// "node h3 (pairs.sendrecv): 5.01 GB/s vs median 10.1, 50.4% below; ranks 4,5; <reason>".
std::string outlier_line(const FleetOutlier& o, const std::vector<ResultRow>& rows);

// The outlier's reason and what explains it: " (explained by suspect h3)" added for a host (a rail's
// explanation is in the reason itself).
std::string outlier_reason(const FleetOutlier& o);
// A rail outlier's place: "rail 1 (NIC mlx5_1 port 1)", "rail 1 (NIC -: why)"; "" for the others.
std::string outlier_rail(const FleetOutlier& o);

struct OutlierCheck {
  std::string file;
  std::vector<std::string> failures;  // outlier_line of each outlier, in file order
  std::string power;                  // analysis.power as the verdict words it (analysis/verdict.h); "" without
};

// Throws gpuscale::Error when the file has no analysis.outliers.
OutlierCheck check_outliers(const LoadedResult& run, const FleetView& view);
// The terminal text: no line longer than width (at least kMinWidth of text/text_width.h).
std::string format_outlier_check(const OutlierCheck& c, std::size_t width = 80);
JUnitSuite outlier_suite(const OutlierCheck& c);

// "FILE: power: ..." for the drain list's header (standard error: standard output is the host names
// alone), "" for a file without analysis.power.
std::string drain_list_header(const LoadedResult& run);

// The hosts to drain from every file, sorted, each once. Throws gpuscale::Error when a file has no
// analysis.outlier_hosts or names a host that is not a host name (core/host_name.h): a drain list goes
// into shell commands and must never carry spaces, quotes, separators or control characters.
std::vector<std::string> drain_list(const std::vector<const LoadedResult*>& runs);

// The nodes a `gpuscale health` document (schema "gpuscale.health", health/health_job.h) fails: those
// with a drain command, by their Slurm node name, sorted. Throws gpuscale::Error naming `path` for
// another document or a name that is not a host name.
std::vector<std::string> health_drain_list(const nlohmann::json& doc, const std::string& path);

}  // namespace gpuscale
