#pragma once
// The options of `gpuscale run`, once: one entry per option says how it is spelled on the command line,
// its --help text, how its text becomes RunOptions, and whether and how a result file records it
// (plan.options) and a resumed run takes it back (harness/resume.h). cli/cmd_run.cpp binds the entries
// to CLI11; resume reads the same entries; the value lists below serve the parser and the recorder.
//
// Not in the table: the telemetry flags, which `gpuscale health` shares (health/telemetry_options.h).
// The command line adds them between the measurement and the reliability options.
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/options.h"

namespace gpuscale {

// -a/--time-reduce: how the ranks' times of a collective combine; nccl_tests is nccl-tests' -a number.
struct TimeReduceValue {
  std::string_view name;
  char nccl_tests;
};
std::span<const TimeReduceValue> time_reduce_values();  // avg, min, max, rank0
// --transports: the collective transports a run may compare.
std::span<const std::string_view> transport_values();  // nccl, mpi
// --placement: out-of-place (false) or in-place (true), as recorded; `alias` is also accepted on the
// command line.
struct PlacementValue {
  std::string_view name, alias;
  bool in_place;
};
std::span<const PlacementValue> placement_values();  // out-of-place, in-place
std::string_view placement_name(bool in_place);

// "a, b or c" (last = " or ") / "a and/or b": value lists in messages.
std::string join_values(std::span<const std::string_view> values, std::string_view sep, std::string_view last);

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

// A recorded value that is not what its option holds: `expected` says what it should be.
struct BadRecordedValue {
  std::string expected;
};

// Every option of `gpuscale run` in --help order (the order they are parsed in, too).
std::span<const RunOption> run_option_table();

// Applies the options of one section, in table order; text(key) is the text given (or the initial
// text). Throws gpuscale::Error for the first bad one.
void apply_run_options(Section section, RunOptions& o, const OptionText& text);

}  // namespace gpuscale
