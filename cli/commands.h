#pragma once
// Subcommands of the gpuscale executable, one cli/cmd_<name>.cpp each. Each adds itself to the CLI and,
// when chosen, sets the action main() runs after parsing.
#include <functional>

#include <CLI/CLI.hpp>

namespace gpuscale {

using Action = std::function<int()>;

void add_run_command(CLI::App& app, Action& action, int argc, char** argv);
void add_list_command(CLI::App& app, Action& action);
void add_validate_command(CLI::App& app, Action& action);
void add_seal_command(CLI::App& app, Action& action);  // cli/cmd_seal.cpp
void add_merge_command(CLI::App& app, Action& action, int argc, char** argv);  // cli/cmd_merge.cpp
void add_report_command(CLI::App& app, Action& action);     // cli/cmd_report.cpp
void add_compare_command(CLI::App& app, Action& action);    // cli/cmd_compare.cpp
void add_check_command(CLI::App& app, Action& action);      // cli/cmd_check.cpp
void add_reference_command(CLI::App& app, Action& action);  // cli/cmd_reference.cpp
void add_health_command(CLI::App& app, Action& action);  // cli/cmd_health.cpp
void add_history_command(CLI::App& app, Action& action);  // cli/cmd_history.cpp
void add_plan_command(CLI::App& app, Action& action);     // cli/cmd_plan.cpp
void add_import_command(CLI::App& app, Action& action, int argc, char** argv);  // cli/cmd_import.cpp
// gpuscale run --store (cli/cmd_run_store.cpp): the URL from the flag or GPUSCALE_STORE ("" for none), refused when malformed;
// then the finished run's file added to it. Returns the run's `code`, or kExitStoreFailed (7) when a
// run that finished (0 or 1) could not be stored; partial runs (4, 5, 6) are not stored.
std::string run_store_url(const std::string& flag);
int store_finished_run(const std::string& url, const std::string& path, int code);

}  // namespace gpuscale
