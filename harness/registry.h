#pragma once
// Every benchmark gpuscale knows, in the order a run measures them. Each family registers its
// benchmarks from its own file through its register_* function (harness/benchmarks/<family>.cpp or
// <family>/<family>.cpp), which registry() calls once in this order; a new family is its file and one
// register_* line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "harness/benchmark.h"

namespace gpuscale {

class Registry {
 public:
  void add(std::unique_ptr<Benchmark> b);
  const std::vector<std::unique_ptr<Benchmark>>& all() const { return benchmarks_; }
  const Benchmark* find(const std::string& key) const;
  // Whether `key` measures once, at the job's full size (BenchmarkInfo::whole_job; resume's WholeJobRule).
  bool whole_job(const std::string& key) const;
  // The groups (BenchmarkInfo::group), in registry order: the one list `run --help`, the unknown-name
  // message and docs/usage.md name (tests/e2e/e2e_quickstart.py holds docs/usage.md to it).
  std::vector<std::string> groups() const;
  // "stream, gemm, copy, collective, training; fleet only when named": groups() with the opt-in ones
  // (every benchmark of the group opt_in) set apart.
  std::string groups_text() const;
  // Throws gpuscale::Error for a name that is neither a key nor a group (checked before anything starts).
  void check_names(const std::vector<std::string>& names) const;
  // Resolves --benchmarks (keys or group names) to benchmarks available on `backend`/`device`, in
  // registry order. Throws gpuscale::Error naming an unknown key, or one the backend cannot run.
  std::vector<const Benchmark*> select(const std::vector<std::string>& names, const std::string& backend,
                                       const Device* device) const;

 private:
  std::vector<std::unique_ptr<Benchmark>> benchmarks_;
};

// The registry with every family registered.
const Registry& registry();

void register_stream_benchmarks(Registry& r);
void register_gemm_benchmarks(Registry& r);
void register_copy_benchmarks(Registry& r);
void register_collective_benchmarks(Registry& r);
void register_training_benchmarks(Registry& r);
void register_train_step_benchmark(Registry& r);
void register_fleet_benchmarks(Registry& r);
void register_burn_benchmarks(Registry& r);  // burn-in windows (harness/benchmarks/burn/burn_plan.h)
void register_checkpoint_benchmarks(Registry& r);  // checkpoint storage (harness/benchmarks/checkpoint/checkpoint_plan.h)

}  // namespace gpuscale
