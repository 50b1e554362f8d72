#pragma once
// What nccl-tests' text output (import/nccl_tests_text.cpp) and its -J JSON (nccl_tests_json.cpp)
// share: the binary's name to gpuscale's collective (collectives/collective_table.h), a "Rank" line's
// fields, and one printed size line to the two rows it holds (out-of-place, in-place), its figures
// checked against nccl-tests' own definitions so that a damaged number is refused, not imported.
#include <optional>
#include <string>
#include <string_view>

#include "collectives/collective_table.h"
#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

// The collective of an nccl-tests binary ("all_reduce_perf", "/opt/nccl-tests/build/all_gather_perf",
// "alltoall_perf_mpi"), or nullptr when it is none gpuscale measures.
const CollectiveSpec* nccl_tests_collective(std::string_view program);

// One printed figure and how finely it was printed (half its last digit: the rounding it may carry).
struct PrintedFigure {
  double value = 0;
  double resolution = 0;
};

// One half of a size line: time (us), algbw, busbw (GB/s), #wrong (absent: "N/A", no check).
struct NcclTestsHalf {
  PrintedFigure time_us, algbw, busbw;
  std::optional<double> wrong;
  bool cputime = false;  // -C: the time column is CPU time, not what algbw was computed from
};

struct NcclTestsLine {
  std::size_t line = 0;  // 1-based, for messages
  unsigned long long size_bytes = 0, count = 0;
  std::string type, redop;
  long long root = -1;
  std::optional<NcclTestsHalf> out_of_place, in_place;  // absent: not printed (trace replay, JSON null)
};

// The rows of one size line, appended to `in` (whose ranks are set): out-of-place then in-place.
// Refuses (ImportText::fail) an unknown type or reduction and figures that contradict nccl-tests'
// definitions: count not the size's, busbw not algbw x the bus factor, algbw not size over time.
void add_nccl_tests_rows(ImportedInput& in, const CollectiveSpec& spec, const NcclTestsLine& l, const ImportText& src);

// The fields of "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s" (2.16 on;
// earlier "[0x%02x]"), or nullopt when `line` is not one.
std::optional<ImportedRank> parse_nccl_tests_rank(std::string_view line);

// What every nccl-tests import lacks, said once per input (ImportedInput::missing).
void note_nccl_tests_missing(ImportedInput& in);

}  // namespace gpuscale
