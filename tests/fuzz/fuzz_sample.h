#pragma once
// A fixed, valid result document the targets set the fuzzed input against (compare, check, merge). It
// must stay valid as the schema grows: an invalid sample stops every target at its first input.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "results/result_io.h"

namespace gpuscale::fuzz {

inline nlohmann::json sample_result() {
  static const nlohmann::json doc = nlohmann::json::parse(R"({
 "schema": "gpuscale.result",
 "schema_version": 2,
 "tool": {"name": "gpuscale", "version": "0.1.0", "commit": "fuzz"},
 "created_utc": "2026-01-02T03:04:05Z",
 "finished_utc": "2026-01-02T03:14:05Z",
 "cluster": {"name": "testcluster", "source": "--cluster"},
 "backend": "cpu",
 "command_line": ["gpuscale", "run"],
 "environment": {},
 "test_fault": null,
 "slurm": null,
 "mpi": {"library": "Open MPI v4.1.4", "world_size": 2},
 "software": {"blas": null, "driver": null, "cuda_runtime": null, "nccl": null},
 "hosts": [{"name": "node0", "node_index": 0, "cpu_model": "Test CPU", "ranks": [0, 1]}],
 "ranks": [{"rank": 0, "host": "node0", "local_rank": 0, "pid": 1, "device": {"backend": "cpu", "name": "Test CPU", "index": 0, "memory_bytes": 17179869184, "free_memory_bytes": 8589934592, "details": {}}}, {"rank": 1, "host": "node0", "local_rank": 1, "pid": 2, "device": {"backend": "cpu", "name": "Test CPU", "index": 0, "memory_bytes": 17179869184, "free_memory_bytes": 8589934592, "details": {}}}],
 "links": {"intra_node": {"value": null, "source": "unknown"}, "inter_node": {"value": null, "source": "one node"}},
 "plan": {"gpu_counts": [1, 2], "benchmarks": ["stream.triad", "all_reduce"], "points": 2, "seed": 12345, "options": {"quick": true}, "point_list": [{"benchmark": "stream.triad", "params": {"dtype": "fp64", "array_bytes": 1048576, "elements": 131072}}, {"benchmark": "all_reduce", "params": {"dtype": "fp32", "size_bytes": 1024, "placement": "out-of-place", "op": "sum"}}]},
 "results": [
  {"aggregate": 100.0, "attempt": 0, "benchmark": "stream.triad", "efficiency_basis": "x", "errors": [], "expected_peak": 250.0, "fraction_of_peak": 0.4, "gpu_count": 1, "input": 0, "metrics": {}, "nodes": 1, "params": {"array_bytes": 1048576, "dtype": "fp64", "elements": 131072}, "peak_source": "test", "ranks": {"device_index": 0, "error": "", "host": 0, "hosts": ["node0"], "metrics": {}, "rank": [0], "stats": {"hi": [101.0], "lo": [99.0], "max": [101.0], "mean": [100.0], "median": [100.0], "min": [99.0], "n": [3], "stddev": [1.0]}, "valid": true, "value": [100.0]}, "scaling_efficiency": 1.0, "scope": "independent", "spread": {"down": 0.01, "reps": 3, "up": 0.01}, "status": "ok", "topology": "single", "unit": "GB/s"},
  {"aggregate": 1.5, "attempt": 0, "benchmark": "all_reduce", "efficiency_basis": "x", "errors": [], "expected_peak": null, "fraction_of_peak": null, "gpu_count": 2, "input": 0, "metrics": {"algbw": 0.34, "bus_factor": 1.0, "busbw": 0.34, "size_bytes": 1024, "time_us": 3.0, "wrong": 0}, "nodes": 1, "params": {"dtype": "fp32", "op": "sum", "placement": "out-of-place", "size_bytes": 1024}, "peak_source": "unknown", "ranks": {"device_index": 0, "error": "", "host": 0, "hosts": ["node0"], "metrics": {"time_us": [3.0, 3.1]}, "rank": [0, 1], "stats": {"hi": [1.6, 1.5], "lo": [1.4, 1.3], "max": [1.6, 1.5], "mean": [1.5, 1.4], "median": [1.5, 1.4], "min": [1.4, 1.3], "n": [3, 3], "stddev": [0.1, 0.1]}, "valid": true, "value": [1.5, 1.4]}, "scaling_efficiency": null, "scope": "collective", "spread": {"down": 0.071, "reps": 3, "up": 0.071}, "status": "ok", "topology": "intra-node", "unit": "GB/s"}],
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
