#pragma once
// BabelStream's output (UoB-HPC/BabelStream src/main.cpp, versions 4 and 5): its CSV (--csv: "function,
// num_times,n_elements,sizeof,max_<unit>_per_sec,min_runtime,max_runtime,avg_runtime", the unit MB by
// default, or MiB, GB, GiB, TB, TiB; version 4 wrote max_mbytes_per_sec) and its text (the "BabelStream",
// "Version:", "Implementation:", "Number of elements:", "Precision:" lines, then "Function <unit>/s Min
// (sec) Max Average" and one line per kernel). Kernels map to gpuscale's STREAM benchmarks
// (kernels/stream_table.h: Copy, Mul = scale, Add, Triad, Dot, the same bytes per pass); Nstream has no
// counterpart and is left out, with a note.
#include <optional>
#include <string>

#include "import/import_text.h"
#include "import/imported_run.h"

namespace gpuscale {

// `backend`: what the run used ("cpu" or "cuda") when the input does not say (the CSV never does;
// the text's Implementation line does for OpenMP, CUDA, ...); "" when not given.
ImportedInput read_babelstream_csv(const ImportText& src, const std::string& backend);
ImportedInput read_babelstream_text(const ImportText& src, const std::string& backend);

bool looks_like_babelstream_csv(const ImportText& src);
bool looks_like_babelstream_text(const ImportText& src);

}  // namespace gpuscale
