#pragma once
// Which units (the ranks of a run, or the GPUs of a node) differ from the rest in driver, CUDA, NCCL,
// GPU model, power limit, clocks or ECC mode. For each field the most common value is the reference;
// every other value is listed with the hosts and units that have it. Pure logic, unit-tested.
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale::health {

struct UnitFacts {
  int unit = 0;       // rank, or GPU index
  std::string host;
  std::map<std::string, nlohmann::json> fields;  // null values are unknown and never compared
};

struct Deviation {
  nlohmann::json value;
  std::vector<std::string> hosts;  // distinct, in unit order
  std::vector<int> units;
};

struct Inconsistency {
  std::string field;
  nlohmann::json majority;  // the most common value (ties: the first seen)
  std::size_t majority_count = 0;
  std::vector<Deviation> others;
};

// The fields compared, in report order.
const std::vector<std::string>& consistency_fields();

std::vector<Inconsistency> find_inconsistencies(const std::vector<UnitFacts>& units);

// "driver_version: 550.54.15 on 6 ranks; 535.104.05 on node2 (ranks 6, 7)"; `unit_name` is "rank" or "GPU".
std::string describe(const Inconsistency& i, const std::string& unit_name);
nlohmann::json to_json(const Inconsistency& i, const std::string& unit_name);

}  // namespace gpuscale::health
