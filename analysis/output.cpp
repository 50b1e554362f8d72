#include "analysis/output.h"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "results/result_io.h"

namespace gpuscale {
namespace fs = std::filesystem;

namespace {

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec)) return fs::equivalent(a, b, ec);
  return fs::weakly_canonical(a, ec) == fs::weakly_canonical(b, ec);
}

}  // namespace

bool any_to_stdout(const std::vector<OutputRequest>& outputs) {
  for (const auto& o : outputs)
    if (o.path == "-") return true;
  return false;
}

void check_outputs(const std::vector<OutputRequest>& outputs, bool force, const std::vector<std::string>& inputs) {
  int to_stdout = 0;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const auto& o = outputs[i];
    if (o.path == "-") {
      if (++to_stdout > 1) throw Error("only one output can go to standard output ('-')");
      continue;
    }
    for (const auto& in : inputs)
      if (same_file(o.path, in)) throw Error(fmt::format("{} {}: is also an input file", o.flag, o.path));
    for (std::size_t j = 0; j < i; ++j)
      if (outputs[j].path != "-" && same_file(o.path, outputs[j].path))
        throw Error(fmt::format("{} and {} both write {}", outputs[j].flag, o.flag, o.path));
    check_output_path(o.path);
    std::error_code ec;
    if (!force && fs::exists(o.path, ec)) throw Error(fmt::format("{}: already exists (use --force to replace it)", o.path));
  }
}

void write_outputs(const std::vector<OutputRequest>& outputs, bool force) {
  for (const auto& o : outputs) {
    if (o.path == "-") {
      std::fwrite(o.text.data(), 1, o.text.size(), stdout);
      std::fflush(stdout);
    } else {
      write_file_atomic(o.path, o.text, force);
    }
  }
}

}  // namespace gpuscale
