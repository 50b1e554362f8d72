// What the row-field table (row_fields.cpp) does with a row: a field's JSON, its number, the row
// members written and read, the history's figures, and the schema of a metric.
#include "results/row_fields.h"

#include <cmath>
#include <cstdint>
#include <map>

#include "results/result_file.h"

namespace gpuscale {

using nlohmann::json;
using P = FieldPlace;
using T = FieldType;

json field_json(const ResultRow& row, const RowField& f) {
  if (f.place == P::row) return f.get ? f.get(row) : json(nullptr);
  if (f.place == P::row_metric && row.metrics.is_object()) {
    const auto it = row.metrics.find(std::string(f.name));
    if (it != row.metrics.end()) return *it;
  }
  return nullptr;
}

std::optional<double> number_in(const json& metrics, const RowField& f) {
  if (!metrics.is_object()) return std::nullopt;
  const auto it = metrics.find(std::string(f.name));
  if (it == metrics.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::optional<double> number_field(const ResultRow& row, const RowField& f) {
  if (f.place == P::row_metric) return number_in(row.metrics, f);
  const json v = field_json(row, f);
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

void write_row_fields(json& j, const ResultRow& row) {
  for (const auto& f : row_fields()) {
    if (f.place != P::row || !f.get) continue;
    json v = f.get(row);
    if (v.is_null() && !f.required) continue;  // an optional member is written only when set
    j[std::string(f.name)] = std::move(v);
  }
}

void read_row_fields(const json& j, ResultRow& row) {
  for (const auto& f : row_fields()) {
    if (f.place != P::row || !f.set) continue;
    const std::string key(f.name);
    if (f.required) {
      f.set(row, j.at(key));
    } else if (const auto it = j.find(key); it != j.end()) {
      f.set(row, *it);
    }
  }
}

std::map<std::string, double> history_figures(const ResultRow& row) {
  std::map<std::string, double> out;
  for (const auto& f : row_fields()) {
    if (f.history.empty() || &f == &fields::aggregate || f.place == P::rank_metric) continue;
    const json v = field_json(row, f);
    const std::string name(f.history);
    if (v.is_number()) out[name] = v.get<double>();
    if (!v.is_object()) continue;
    for (const auto& [member, figure] : v.items())
      if (figure.is_number()) out[name + "." + member] = figure.get<double>();
  }
  return out;
}

void put_history_figure(ResultRow& row, const std::string& stored, double value) {
  const auto dot = stored.find('.');
  const std::string name = stored.substr(0, dot);
  for (const auto& f : row_fields()) {
    if (f.history != name || &f == &fields::aggregate || f.place == P::rank_metric) continue;
    const json v = f.type == T::integer && std::isfinite(value) && std::abs(value) < 9e15
                       ? json(static_cast<std::int64_t>(std::llround(value)))
                       : json(value);
    if (dot != std::string::npos) {  // an object's member ("phase_us.compute")
      if (f.type != T::object || f.place != P::row_metric) return;
      if (!row.metrics.is_object()) row.metrics = json::object();
      json& object = row.metrics[std::string(f.name)];
      if (!object.is_object()) object = json::object();
      object[stored.substr(dot + 1)] = v;
    } else if (f.place == P::row_metric) {
      if (!row.metrics.is_object()) row.metrics = json::object();
      row.metrics[std::string(f.name)] = v;
    } else if (f.set) {
      f.set(row, v);
    }
    return;
  }
}

json metric_schema(const RowField& f) {
  json one;
  switch (f.type) {
    case T::number: one = {{"type", "number"}}; break;
    case T::integer: one = {{"type", "integer"}}; break;
    case T::text: one = {{"type", "string"}}; break;
    case T::boolean: one = {{"type", "boolean"}}; break;
    default: return nullptr;
  }
  // No "minimum" for non_negative: the loader's check names the field and the value in one plain line
  // (analysis/result_set.cpp), where the schema's message would only point at it.
  if (f.nullable) one = {{"oneOf", json::array({one, {{"type", "null"}}})}};
  if (f.place != P::rank_metric) return one;
  // A rank metric is a column: one value for every rank, or an array with null where a rank has none.
  const json entry = {{"oneOf", json::array({one, {{"type", "null"}}})}};
  const json column = {{"type", "array"}, {"items", entry}};
  return {{"oneOf", json::array({one, column})}};
}

}  // namespace gpuscale
