#pragma once
// The semantic validator: what a result file says, checked against itself. The schema checks each
// field's shape; this checks that the fields agree (docs/results.md, "What a reader checks"): the
// summary with the rows, a row's status with its content, the ranks, hosts and groups with each other
// and the header, the pair matrices with their members, the rows with the plan and the analysis, the
// times with the calendar. Every reader runs it after the schema (results/result_stream.h), so nobody
// acts on a file that contradicts itself.
//
// Rows are checked as they stream by, and what the file-wide checks need of them is kept compactly
// (a key per row, a host per rank), so the cost is linear in the file (docs/scale.md's reader budget).
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/result_file.h"

namespace gpuscale {

struct Contradiction {
  std::string text;                // one line, starting with the JSON pointer it concerns
  std::optional<std::size_t> row;  // the row it makes untrustworthy; nullopt: the whole file
  // A figure no reader can use (negative, not finite, a rank twice, outside the world): refused even
  // by readers that take contradictions marked (--lenient).
  bool unreadable = false;
};

struct SemanticReport {
  std::vector<Contradiction> found;   // in file order, rows first; at most kKept
  std::size_t total = 0;              // how many were found (more than found.size() past kKept)
  std::vector<std::size_t> untrusted_rows;  // rows a contradiction concerns, ascending, each once
  bool whole_file = false;                  // a contradiction concerns the file as a whole
  bool unreadable = false;                  // one of them is unreadable
  static constexpr std::size_t kKept = 1000;
  bool empty() const { return total == 0; }
};

class ResultChecker {
 public:
  // One row, in file order: as the file holds it (`raw`, of either version) and as converted.
  void row(const nlohmann::json& raw, const ResultRow& row, std::size_t index);
  // The header (as version 2, without its rows) against itself and the rows seen. Call once.
  SemanticReport finish(const nlohmann::json& header);

  // What the file-wide checks keep of a row.
  struct RowFacts {
    std::string point;  // benchmark and canonical params
    std::string benchmark;
    int gpu_count = 0;
    RowStatus status = RowStatus::ok;
    int top_rank = -1;       // the highest rank the row names (its ranks, groups, idle ranks, matrices)
    std::size_t listed = 0;  // ranks the row lists
    int attempt = 0;
    std::optional<int> input;
    std::size_t node_members = 0;  // the most members of a node or rail matrix (at most the hosts)
  };

 private:
  void add(std::string text, std::optional<std::size_t> row, bool unreadable = false);
  void check_row_hosts(const ResultRow& row, std::size_t index);

  SemanticReport report_;
  std::vector<RowFacts> rows_;
  std::unordered_map<std::string, std::size_t> first_row_of_key_;
  std::set<std::string> row_hosts_;  // every host a row names
  // (input or -1, rank) -> the host and device index the rows give it, and the first row that did
  struct Placement {
    std::string host;
    int device_index = 0;
    std::size_t row = 0;
    bool named = false;  // a row that disagrees was named (once per rank: one edit would name it in every row)
  };
  std::unordered_map<long long, Placement> placements_;
};

// The first contradiction, as a reader that refuses the file says it: "<problem>: `gpuscale validate
// FILE` lists every contradiction".
std::string refusal_line(const SemanticReport& r, const std::string& file);

}  // namespace gpuscale
