#pragma once
// The GPU-health part of a run's text summary, shared by the end-of-run output of `gpuscale run` and
// `gpuscale report` (so a report reads like the run that wrote the file): verdicts that are not PASS,
// measurements taken while a GPU was throttled, consistency warnings; one line when telemetry was
// unavailable; the run's energy (GPUs or nodes, per host). Empty when the file has no health section. Every string from the file is escaped.
#include <string>
#include <vector>

#include "results/result_file.h"

namespace gpuscale {

std::string format_health(const nlohmann::json& health, const std::vector<ResultRow>& rows);

}  // namespace gpuscale
