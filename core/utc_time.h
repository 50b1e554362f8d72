#pragma once
// Times as result files, health jobs and the history write them: "2026-11-29T18:00:00Z" (UTC, whole
// seconds). One writer and one reader, so every file and store agrees on the form.
#include <chrono>
#include <optional>
#include <string>

namespace gpuscale {

std::string utc_timestamp(std::chrono::system_clock::time_point t);  // sub-second parts dropped
// Seconds since the epoch of such a time; nullopt when the text is not one.
std::optional<double> utc_epoch_seconds(const std::string& utc);

}  // namespace gpuscale
