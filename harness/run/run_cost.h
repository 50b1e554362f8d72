#pragma once
// What the harness itself costs rank 0 (issue 15): the seconds it spends in the benchmarks' own run
// and around them (gathering the ranks' measurements, building the rows, the rest of the control
// plane between rows: agreements, file writes, progress), and its peak memory. Written into the result
// as reliability.harness, so a run at scale says whether the control plane keeps up (docs/scale.md).
#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

namespace gpuscale {

class RunCost {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Part { benchmark, gather, build };

  // Time spent in one part while in scope.
  class Scope {
   public:
    Scope(RunCost& cost, Part part) : cost_(cost), part_(part), start_(Clock::now()) {}
    ~Scope() { cost_.add(part_, start_, Clock::now()); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    RunCost& cost_;
    Part part_;
    Clock::time_point start_;
  };

  void add(Part part, Clock::time_point start, Clock::time_point end);
  // A row was built (rank 0); the span from the first row's start to the last row's end is measuring.
  void row_done() { ++rows_; }
  // {rows, benchmark_s, gather_s, build_s, other_s (the measuring span less those), per_row_overhead_s
  // ((gather + build + other) / rows), rank0_peak_rss_bytes}
  nlohmann::json to_json() const;

 private:
  long long rows_ = 0;
  double seconds_[3] = {0, 0, 0};
  std::optional<Clock::time_point> first_, last_;
};

// Rank 0's process-wide account (only rank 0 records and writes it).
RunCost& run_cost();

// VmHWM of /proc/self/status in bytes (the process's peak resident memory), or nullopt when unknown.
std::optional<long long> peak_rss_bytes();
// The same from a status file's text (tests).
std::optional<long long> peak_rss_from_status(const std::string& status_text);

}  // namespace gpuscale
