#include "harness/rows/measurement_json.h"

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {
namespace {

using nlohmann::json;

// Short keys and absent defaults: the encoding is sent once per rank per row.
enum Flag : unsigned { kInvalid = 1, kFailed = 2, kSkipped = 4 };

}  // namespace

RankSummary summarize(const RankMeasurement& m, bool group_first) {
  RankSummary s;
  if (!m.reps.empty()) s.stats = compute_stats(m.reps);
  s.valid = m.valid;
  s.failed = m.failed;
  s.skipped = m.skipped;
  s.message = m.message;
  s.metrics = m.metrics;
  if (group_first) {
    s.row_metrics = m.row_metrics;
    s.aggregate = m.aggregate;
  }
  return s;
}

std::string encode_summary(const RankSummary& s) {
  json j = json::object();
  const unsigned flags = (s.valid ? 0u : kInvalid) | (s.failed ? kFailed : 0u) | (s.skipped ? kSkipped : 0u);
  if (flags != 0) j["f"] = flags;
  if (s.stats)
    j["s"] = {s.stats->n,    s.stats->median, s.stats->min, s.stats->max,
              s.stats->mean, s.stats->stddev, s.stats->lo,  s.stats->hi};
  if (!s.message.empty()) j["e"] = s.message;
  if (!s.metrics.empty()) j["m"] = s.metrics;
  if (!s.row_metrics.empty()) j["r"] = s.row_metrics;
  if (s.aggregate) j["a"] = *s.aggregate;
  const auto bytes = json::to_msgpack(j);
  return std::string(bytes.begin(), bytes.end());
}

RankSummary decode_summary(std::string_view bytes) {
  try {
    const json j = json::from_msgpack(bytes.begin(), bytes.end());
    if (!j.is_object()) throw Error("not an object");
    RankSummary s;
    const unsigned flags = j.value("f", 0u);
    s.valid = (flags & kInvalid) == 0;
    s.failed = (flags & kFailed) != 0;
    s.skipped = (flags & kSkipped) != 0;
    if (j.contains("s")) {
      const auto& a = j.at("s");
      if (!a.is_array() || a.size() != 8) throw Error("statistics are not eight numbers");
      RepStats st;
      st.n = a[0].get<std::size_t>();
      st.median = a[1].get<double>();
      st.min = a[2].get<double>();
      st.max = a[3].get<double>();
      st.mean = a[4].get<double>();
      st.stddev = a[5].get<double>();
      st.lo = a[6].get<double>();
      st.hi = a[7].get<double>();
      s.stats = st;
    }
    s.message = j.value("e", std::string());
    if (j.contains("m")) s.metrics = j.at("m");
    if (j.contains("r")) s.row_metrics = j.at("r");
    if (j.contains("a")) s.aggregate = j.at("a").get<double>();
    return s;
  } catch (const std::exception& e) {
    throw Error(fmt::format("internal: a rank's measurement summary cannot be read ({})", e.what()), 1);
  }
}

}  // namespace gpuscale
