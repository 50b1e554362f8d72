#pragma once
// nccl-tests' text output (every *_perf binary, versions 2.13 to 2.19): the "#" header lines (version,
// the binary, nThread/nGpus and iterations, one "Rank" line per GPU), the per-size table (out-of-place
// and in-place columns, with -I's per-iteration columns and -C's cputime), and the footer ("Out of
// bounds values", "Avg bus bandwidth"), which must agree with the table: a truncated or edited log is
// refused. Its layout: NVIDIA/nccl-tests src/util.cu (writeDeviceReport, writeResultHeader,
// writeBenchmarkLine*, writeResultFooter); before 2.18 the same lines in src/common.cu.
#include <string>

#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

// `collective`: the nccl-tests binary the user names (--collective), needed for logs before 2.18, which
// do not print it; "" to take the log's own "Collective test starting" line.
ImportedInput read_nccl_tests_text(const ImportText& src, const std::string& collective);

// Whether the text looks like nccl-tests' output (for --format auto).
bool looks_like_nccl_tests_text(const ImportText& src);

}  // namespace gpuscale
