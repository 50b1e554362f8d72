#pragma once
// nccl-tests' -J JSON output (2.18 on; NVIDIA/nccl-tests src/util.cu, jsonOutputInit,
// writeDeviceReport, writeBenchmarkLine*, writePerIterReport, writeResultFooter): "version" 1,
// "start_time", "args" (its command line), "env", "nccl_version", "config" (threads, GPUs, iterations,
// "devices": one per rank), "results" (per size: size, count, type, redop, root, "out_of_place" and
// "in_place" with time or cpu_time, alg_bw, bus_bw, nwrong), "out_of_bounds", "average_bus_bandwidth",
// "errors", "end_time". Problems are named by their JSON pointer; a syntax error by its line.
#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

ImportedInput read_nccl_tests_json(const ImportText& src);

// Whether the text is a JSON object that looks like nccl-tests' (for --format auto).
bool looks_like_nccl_tests_json(const ImportText& src);

}  // namespace gpuscale
