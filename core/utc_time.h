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
// True when `utc` is such a time on the calendar: written back from its own seconds it is the same
// text (month 13, hour 99 or 30 February are not).
bool is_utc_timestamp(const std::string& utc);

}  // namespace gpuscale
