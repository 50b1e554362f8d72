#include "core/utc_time.h"

#include <ctime>

namespace gpuscale {

namespace {
constexpr const char* kUtcFormat = "%Y-%m-%dT%H:%M:%SZ";
}

std::string utc_timestamp(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, kUtcFormat, &tm);
  return buf;
}

std::optional<double> utc_epoch_seconds(const std::string& utc) {
  std::tm tm{};
  const char* end = ::strptime(utc.c_str(), kUtcFormat, &tm);
  if (!end || *end != '\0') return std::nullopt;
  return static_cast<double>(::timegm(&tm));
}

bool is_utc_timestamp(const std::string& utc) {
  const auto seconds = utc_epoch_seconds(utc);
  return seconds && utc_timestamp(std::chrono::system_clock::from_time_t(static_cast<std::time_t>(*seconds))) == utc;
}

}  // namespace gpuscale
