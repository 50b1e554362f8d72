#include "harness/measurement_json.h"

namespace gpuscale {

nlohmann::json measurement_to_json(const RankMeasurement& m) {
  return {{"reps", m.reps},       {"valid", m.valid},     {"failed", m.failed},
          {"skipped", m.skipped}, {"message", m.message}, {"metrics", m.metrics},
          {"row_metrics", m.row_metrics},
          {"aggregate", m.aggregate ? nlohmann::json(*m.aggregate) : nlohmann::json(nullptr)}};
}

RankMeasurement measurement_from_json(const nlohmann::json& j) {
  RankMeasurement m;
  j.at("reps").get_to(m.reps);
  j.at("valid").get_to(m.valid);
  j.at("failed").get_to(m.failed);
  j.at("skipped").get_to(m.skipped);
  j.at("message").get_to(m.message);
  m.metrics = j.at("metrics");
  m.row_metrics = j.at("row_metrics");
  if (!j.at("aggregate").is_null()) m.aggregate = j.at("aggregate").get<double>();
  return m;
}

}  // namespace gpuscale
