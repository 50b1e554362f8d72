// gpuscale reference FILE [FILE ...] -o REF: a reference from known-good runs (the median of several,
// tolerances from their spread), which gpuscale check (cmd_check.cpp) judges a run against.
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/output.h"
#include "analysis/reference.h"
#include "cli/commands.h"
#include "core/error.h"
#include "core/shown_text.h"
#include "core/term_text.h"
#include "core/units.h"

namespace gpuscale {
namespace {

struct ReferenceFlags {
  std::vector<std::string> files;
  std::string output, tolerance = "0.10", cluster;
  bool force = false;
};

double fraction(const std::string& text) {
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && v >= 0 && v <= 10) return v;
  } catch (const std::exception&) {
  }
  throw Error(fmt::format("invalid --tolerance '{}': LOWER[,UPPER] as fractions >= 0 (0.1 = 10%)", text));
}

int run_reference(const ReferenceFlags& f) {
  ReferenceOptions opts;
  const auto parts = split_list(f.tolerance, "--tolerance");
  if (parts.size() > 2) throw Error(fmt::format("invalid --tolerance '{}': LOWER[,UPPER]", f.tolerance));
  opts.lower = fraction(parts[0]);
  if (opts.lower > 1) throw Error(fmt::format("invalid --tolerance '{}': the lower tolerance is at most 1", f.tolerance));
  if (parts.size() == 2) opts.upper = fraction(parts[1]);
  opts.cluster = f.cluster;
  std::vector<OutputRequest> outputs{{"-o", f.output, ""}};
  check_outputs(outputs, f.force, f.files);
  std::vector<LoadedResult> runs;
  for (const auto& path : f.files) runs.push_back(load_result(path, RowDetail::rows_only));  // rows are judged, not ranks
  std::vector<const LoadedResult*> of;
  for (const auto& r : runs) of.push_back(&r);
  const auto ref = make_reference(of, opts);
  outputs[0].text = json_terminal_safe(ref.dump(1)) + "\n";
  write_outputs(outputs, f.force);
  if (f.output != "-")
    fmt::print("{}: {} reference entries for cluster '{}' from {} run(s) (lower {:.0f}%{}, upper {})\n", f.output,
               ref["clusters"][0]["entries"].size(), terminal_quote(ref["clusters"][0]["cluster"].get<std::string>()), runs.size(),
               opts.lower * 100, runs.size() > 1 ? " or the runs' spread" : "",
               opts.upper ? fmt::format("{:.0f}%", *opts.upper * 100) : "none");
  return kExitOk;
}

}  // namespace

void add_reference_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("reference", "write a reference file from known-good runs (for gpuscale check): the "
                                              "median of the runs, tolerances from their spread");
  auto f = std::make_shared<ReferenceFlags>();
  cmd->add_option("files", f->files, "result JSON files of known-good runs (one or more)")->required();
  cmd->add_option("-o,--output", f->output, "reference file to write ('-': standard output)")->required();
  cmd->add_option("--tolerance", f->tolerance,
                  "LOWER[,UPPER]: fractions below/above the value that still pass, the floor of the tolerances several "
                  "runs widen to their spread (default 0.10, no upper bound)");
  cmd->add_option("--cluster", f->cluster, "cluster name or pattern of the entries (default: the run's cluster)");
  cmd->add_flag("--force", f->force, "replace the output file if it already exists");
  cmd->callback([&action, f] { action = [f] { return run_reference(*f); }; });
}

}  // namespace gpuscale
