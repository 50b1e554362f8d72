#pragma once
// The options of `gpuscale run`, once: one entry per option says how it is spelled on the command line,
// its --help text, how its text becomes RunOptions, and whether and how a result file records it
// (plan.options) and a resumed run takes it back (harness/run/resume.h). cli/cmd_run.cpp binds the entries
// to CLI11; resume reads the same entries; the value lists below serve the parser and the recorder.
//
// The telemetry flags, which `gpuscale health` shares, are health's (health/telemetry_options.h): the
// command line adds them between the measurement and the reliability options, and the table holds only
// how they are recorded (the `shared` entry).
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/options/options.h"
#include "harness/options/run_option_values.h"

namespace gpuscale {

// What a result file's plan.options entry means to a resumed run.
enum class Recorded {
  no,         // not recorded
  top_level,  // recorded at the document's top level (backend, plan.seed): resume compares it itself
  shapes,  // shapes the points or how they are measured: adopted when not given, refused when different
  label,   // labels results only: recorded, and a resumed run may set it anew
};

// Where --help lists an option: the measurement options, then the telemetry flags, then these.
enum class Section { measure, reliability };

// The option texts given on the command line, by RunOption::key (what a cross-option check reads).
using OptionText = std::function<const std::string&(std::string_view key)>;

struct RunOption {
  std::string names;  // as CLI11 takes them: "-b,--minbytes"
  std::string key;    // plan.options key when recorded; RunOptions::given holds it when given
  std::string help;
  Section section = Section::measure;
  bool is_switch = false;     // a flag without a value (its text is "true" or "false")
  const char* initial = "";   // the text when not given; an option with one is parsed even when not given
  bool shared = false;        // the telemetry flags add it to the command line (no parse here)
  // From the command-line text: throws gpuscale::Error naming `what` ("-b/--minbytes") and the text.
  void (*parse)(RunOptions& o, const std::string& text, const std::string& what) = nullptr;
  // Runs after this option is parsed, given or not: checks that read several options.
  void (*check)(const RunOptions& o, const OptionText& text) = nullptr;
  Recorded recorded = Recorded::no;
  nlohmann::json (*record)(const RunOptions& o) = nullptr;  // the plan.options value (recorded options)
  // From a recorded value (Recorded::shapes): throws BadRecordedValue.
  void (*adopt)(RunOptions& o, const nlohmann::json& value) = nullptr;

  std::string flag() const;  // the long name: "--minbytes" (messages and the given-check use it)
  std::string what() const;  // as parse errors name it: "-b/--minbytes"
};

// The one rule for an empty value, which every value option of the table (and --store) takes through
// cli/cmd_run.cpp: refused, since an empty text reads as "not given" ('--benchmarks ""' ran the default
// plan, '-o ""' wrote the default file, '--resume ""' ran the full plan). "" when `value` is fine.
std::string empty_value_problem(std::string_view value);

// Every option of `gpuscale run` in --help order (the order they are parsed in, too).
std::span<const RunOption> run_option_table();

// The rows a benchmark family with options of its own adds, in --help order. Each is defined in its
// family's folder (harness/benchmarks/burn/burn_options.cpp, checkpoint/checkpoint_options.cpp), as the
// registry's register_* functions are, so the table needs nothing from the floors above it.
void add_burn_options(std::vector<RunOption>& table);        // --burn, --window, --duration
void add_checkpoint_options(std::vector<RunOption>& table);  // --ckpt-dir, --ckpt-size, --ckpt-rank-size
void add_iter_timing_options(std::vector<RunOption>& table);  // collectives' -I/--iter-timing, -K/--skip-iters

// Applies the options of one section, in table order; text(key) is the text given (or the initial
// text). Throws gpuscale::Error for the first bad one.
void apply_run_options(Section section, RunOptions& o, const OptionText& text);

}  // namespace gpuscale
