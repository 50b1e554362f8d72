#pragma once
// A fixed, valid result document the targets set the fuzzed input against (compare, check, merge). It
// must stay valid as the schema grows: an invalid sample stops every target at its first input.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "results/result_io.h"

namespace gpuscale::fuzz {

inline nlohmann::json sample_result() {
  static const nlohmann::json doc = nlohmann::json::parse(R"({
 "schema": "gpuscale.result", "schema_version": 1,
 "tool": {"name": "gpuscale", "version": "0.1.0", "commit": "fuzz"},
 "created_utc": "2026-01-02T03:04:05Z", "finished_utc": "2026-01-02T03:14:05Z",
 "cluster": {"name": "testcluster", "source": "--cluster"}, "backend": "cpu",
 "command_line": ["gpuscale", "run"], "environment": {}, "test_fault": null, "slurm": null,
 "mpi": {"library": "Open MPI v4.1.4", "world_size": 2},
 "software": {"blas": null, "driver": null, "cuda_runtime": null, "nccl": null}, "hosts": [{"name": "node0", "node_index": 0, "cpu_model": "Test CPU", "ranks": [0, 1]}],
 "ranks": [
  {"rank": 0, "host": "node0", "local_rank": 0, "pid": 1, "device": {"backend": "cpu", "name": "Test CPU", "index": 0, "memory_bytes": 17179869184, "free_memory_bytes": 8589934592, "details": {}}},
  {"rank": 1, "host": "node0", "local_rank": 1, "pid": 2, "device": {"backend": "cpu", "name": "Test CPU", "index": 0, "memory_bytes": 17179869184, "free_memory_bytes": 8589934592, "details": {}}}],
 "links": {"intra_node": {"value": null, "source": "unknown"}, "inter_node": {"value": null, "source": "one node"}},
 "plan": {"gpu_counts": [1, 2], "benchmarks": ["stream.triad", "all_reduce"], "points": 2, "seed": 12345,
  "options": {"quick": true},
  "point_list": [{"benchmark": "stream.triad", "params": {"dtype": "fp64", "array_bytes": 1048576, "elements": 131072}},
                 {"benchmark": "all_reduce", "params": {"dtype": "fp32", "size_bytes": 1024, "placement": "out-of-place", "op": "sum"}}]},
 "results": [
  {"benchmark": "stream.triad", "scope": "independent", "params": {"dtype": "fp64", "array_bytes": 1048576, "elements": 131072},
   "gpu_count": 1, "nodes": 1, "topology": "single", "unit": "GB/s", "status": "ok",
   "ranks": [{"rank": 0, "host": "node0", "device_index": 0, "value": 100.0, "stats": {"n": 3, "median": 100.0, "min": 99.0, "max": 101.0, "mean": 100.0, "stddev": 1.0}, "valid": true, "error": "", "metrics": {}}],
   "aggregate": 100.0, "scaling_efficiency": 1.0, "efficiency_basis": "x", "expected_peak": 250.0, "fraction_of_peak": 0.4,
   "peak_source": "test", "metrics": {}, "errors": [], "attempt": 0},
  {"benchmark": "all_reduce", "scope": "collective", "params": {"dtype": "fp32", "size_bytes": 1024, "placement": "out-of-place", "op": "sum"},
   "gpu_count": 2, "nodes": 1, "topology": "intra-node", "unit": "GB/s", "status": "ok",
   "ranks": [{"rank": 0, "host": "node0", "device_index": 0, "value": 1.5, "stats": {"n": 3, "median": 1.5, "min": 1.4, "max": 1.6, "mean": 1.5, "stddev": 0.1}, "valid": true, "error": "", "metrics": {"time_us": 3.0}},
             {"rank": 1, "host": "node0", "device_index": 0, "value": 1.4, "stats": {"n": 3, "median": 1.4, "min": 1.3, "max": 1.5, "mean": 1.4, "stddev": 0.1}, "valid": true, "error": "", "metrics": {"time_us": 3.1}}],
   "aggregate": 1.5, "scaling_efficiency": null, "efficiency_basis": "x", "expected_peak": null, "fraction_of_peak": null,
   "peak_source": "unknown", "metrics": {"size_bytes": 1024, "time_us": 3.0, "algbw": 0.34, "busbw": 0.34, "bus_factor": 1.0, "wrong": 0},
   "errors": [], "attempt": 0}],
 "summary": {"complete": true, "valid": true, "rows": 2, "ok": 2, "invalid": 0, "failed": 0, "skipped": 0, "exit_code": 0}
})");
  static const bool valid = [] {
    const auto problems = validate_result_json(doc);
    if (!problems.empty()) std::fprintf(stderr, "fuzz_sample.h: the sample is not a valid result: %s\n", problems.c_str());
    return problems.empty();
  }();
  if (!valid) __builtin_trap();
  return doc;
}

}  // namespace gpuscale::fuzz
