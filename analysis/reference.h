#pragma once
// Reference values as data, ReFrame's reference tuples the model: per cluster, entries keyed by
// benchmark (wildcards), a subset of params (wildcard values) and gpu_count ("*" allowed), each with a
// value, lower and upper fractional tolerances and a unit. docs/analysis.md describes the file.
//
//   {"schema": "gpuscale.reference", "schema_version": 1,
//    "clusters": [{"cluster": "dgx-*", "entries": [
//        {"benchmark": "stream.*", "params": {"dtype": "fp64"}, "gpu_count": "*",
//         "value": 3000, "lower": 0.1, "upper": null, "unit": "GB/s"}]}]}
//
// A row passes when value x (1 - lower) <= row value <= value x (1 + upper) (a null bound is open).
// Each row is checked against the first matching entry (entries of every matching cluster, in file
// order): write specific entries before general ones.
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/junit.h"
#include "analysis/result_set.h"

namespace gpuscale {

inline constexpr const char* kReferenceSchema = "gpuscale.reference";

struct ReferenceEntry {
  std::string cluster;    // the cluster pattern it was listed under
  std::size_t index = 0;  // position within its cluster's entries (for messages)
  std::string benchmark;  // fnmatch pattern
  nlohmann::json params = nlohmann::json::object();  // subset; string values are fnmatch patterns
  std::optional<int> gpu_count;                       // nullopt: any ("*")
  double value = 0;
  std::optional<double> lower, upper;  // fractions >= 0; nullopt: no bound on that side
  std::string unit;
  std::string describe() const;  // "cluster 'x' entry 3 (stream.* {dtype: fp64} @ *)"
};

struct Reference {
  std::string path;
  std::vector<std::pair<std::string, std::vector<ReferenceEntry>>> clusters;  // in file order
};

// Parses and validates a reference document; throws gpuscale::Error("<label>: <problem>").
Reference reference_from_json(const std::string& label, const nlohmann::json& doc);
Reference load_reference(const std::string& path);

struct ReferenceOptions {
  double lower = 0.10;          // the floor of the lower tolerance
  std::optional<double> upper;  // the floor of the upper one; none by default: faster is not a failure
  std::string cluster;          // empty: the runs' cluster name (they must agree)
};
// A reference from known-good runs (analysis/reference_build.cpp): one exact entry per row that every
// run holding it measured ok with a positive value (a row without a value, e.g. a collective at 1 GPU,
// never enters). Over the k runs' values v_i of a row:
//   value = median(v_i)
//   lower = max(opts.lower, (value - min v_i) / value)      (at most 1)
//   upper = max(*opts.upper, (max v_i - value) / value)     (null when opts.upper is)
// so one run gives value v with the floors as tolerances, and several runs widen a tolerance to cover
// every run where they spread wider. Throws gpuscale::Error when the runs' clusters differ and
// opts.cluster is empty.
nlohmann::json make_reference(const std::vector<const LoadedResult*>& runs, const ReferenceOptions& opts);
nlohmann::json make_reference(const LoadedResult& run, const ReferenceOptions& opts);

bool entry_matches(const ReferenceEntry& e, const ResultRow& row);

struct CheckedRow {
  const ResultRow* row = nullptr;
  const ReferenceEntry* entry = nullptr;
  bool pass = false;
  std::string message;  // "10.2 GB/s in [9.5, -]" or why it failed
};

struct CheckOutcome {
  std::string file, cluster;
  std::vector<std::string> clusters_used;             // reference cluster patterns that matched
  std::vector<CheckedRow> checked;                    // rows with a matching entry
  std::vector<const ReferenceEntry*> unmatched;       // entries no row matched: failures
  std::size_t uncovered = 0;                          // rows no entry matched (not checked)
  std::size_t failures() const;
};

// Throws gpuscale::Error when the reference holds no cluster matching the run's cluster.
CheckOutcome check_against(const LoadedResult& run, const Reference& ref);
// The terminal text (analysis/check_text.cpp): no line longer than width (at least kMinWidth).
std::string format_check(const CheckOutcome& c, std::size_t width = 80);
JUnitSuite check_suite(const CheckOutcome& c);

}  // namespace gpuscale
