#pragma once
// nvbandwidth's output (NVIDIA/nvbandwidth v0.5 to v0.8; read at v0.8, commit 66746a3):
//  - text (output.cpp): "nvbandwidth Version: v0.8", "Built from Git version: ...", under MPI "MPI
//    version: ...", the NOTE lines, "CUDA Runtime Version: N", "CUDA Driver Version: N", "Driver Version:
//    S", the host name and "Device i: NAME (domain:bus:device)" lines (under MPI "Process i (host):
//    device d: NAME (...)"), then per testcase "Running KEY." and its matrices (inline_common.h
//    operator<<): the description, a header of column indices, one line per row ("N/A" where not
//    measured, "%.2f" otherwise), a blank line, "SUM KEY VALUE" (or "&&&& PERF KEY VALUE +GB/s");
//  - --json (json_output.cpp): {"nvbandwidth": {"version", "git_version", "CUDA Runtime Version",
//    "Driver Version", "GPU Device list": ["i: NAME (...): (host)"], "testcases": [{"name", "status",
//    "bandwidth_description", "bandwidth_matrix" (rows of strings: "%g" or "N/A"), "sum"}], "warning",
//    "error"}}. A bidirectional device-to-device testcase appends its three matrices to one
//    bandwidth_matrix and keeps the last one's sum and description.
// Testcases map to rows as import/nvbandwidth_cases.h says.
#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

ImportedInput read_nvbandwidth_text(const ImportText& src);
ImportedInput read_nvbandwidth_json(const ImportText& src);

bool looks_like_nvbandwidth_text(const ImportText& src);
bool looks_like_nvbandwidth_json(const ImportText& src);

}  // namespace gpuscale
