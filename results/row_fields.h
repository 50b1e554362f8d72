#pragma once
// The row fields: every field of a result row (docs/results.md, "The row") declared once, with what
// each output does with it. The version-2 row writer and reader, the readers' checks of figures, the
// schema's types of metrics, CSV, OpenMetrics, the text and Markdown tables, compare and the history
// store all read this table, so a new field is one entry in row_fields.cpp plus the code that measures
// it (docs/architecture.md, "Where a change goes"). Analysis reads metrics through these typed entries
// (`number_field(row, fields::time_us)`), never through a key spelled again.
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace gpuscale {

struct ResultRow;

// Where a field lives in a row: a member of the row itself, a key of the row's `metrics` (row-level
// figures a benchmark adds), or a key of each rank's metrics (a column in a version-2 file).
enum class FieldPlace { row, row_metric, rank_metric };
// Its JSON type. `structure`: a row member whose JSON the row writer lays out itself (ranks, groups,
// spread, ...); the table still says what it is.
enum class FieldType { number, integer, text, boolean, object, array, structure };
// How compare judges it: not at all, or better when higher or lower, or as the row's unit says.
enum class Judged { no, by_unit, higher, lower };
// How a table cell shows a number.
enum class Shown { figure, percent, count, text };

struct RowField {
  std::string_view name = {};   // the JSON key (in the row, or in its metrics)
  FieldPlace place = FieldPlace::row;
  FieldType type = FieldType::number;
  std::string_view unit = {};     // "" none; "row": the row's own unit
  std::string_view meaning = {};  // one line: docs/results.md, `gpuscale list --fields`, the OpenMetrics HELP
  bool required = false;     // every row has it (the schema's "required")
  bool nullable = false;     // null means "no figure"; a row-level optional is written only when set
  bool non_negative = false; // readers refuse a negative or non-finite number
  Judged judged = Judged::no;
  std::string_view column = {};       // heading in the text and Markdown headline tables ("" none)
  Shown shown = Shown::figure;   // how that column shows it
  std::string_view csv = {};          // its CSV column ("" none)
  std::string_view openmetrics = {};  // its OpenMetrics gauge family ("" none); HELP is `meaning`
  std::string_view history = {};      // stored by the history under this name ("" not stored)
  // A row member's JSON (row-place fields with a scalar type): the writer puts it, the reader takes it.
  nlohmann::json (*get)(const ResultRow&) = nullptr;
  void (*set)(ResultRow&, const nlohmann::json&) = nullptr;
};

// Every field, in the order outputs list them.
std::span<const RowField> row_fields();
// The field of that name and place, or nullptr.
const RowField* find_row_field(std::string_view name, FieldPlace place);

// The entries analysis names in code: one constant each, so a misspelt name fails to compile. They are
// set during static initialisation: use them in functions, not in other static initialisers.
namespace fields {
extern const RowField& gpu_count;
extern const RowField& status;
extern const RowField& aggregate;
extern const RowField& scaling_efficiency;
extern const RowField& fraction_of_peak;
extern const RowField& expected_peak;
extern const RowField& size_bytes;
extern const RowField& count;
extern const RowField& time_us;
extern const RowField& algbw;
extern const RowField& busbw;
extern const RowField& bus_factor;
extern const RowField& busbw_note;
extern const RowField& wrong;
extern const RowField& step_time_us;
extern const RowField& exposed_comm_us;
extern const RowField& compute_time_us;
extern const RowField& gradient_bytes;
extern const RowField& phase_us;
extern const RowField& avg_power_w;
extern const RowField& checkpoint_gb_s;
extern const RowField& iter_p50_us;
extern const RowField& iter_p99_us;
extern const RowField& iter_max_us;
extern const RowField& iter_cv_pct;
extern const RowField& iter_spikes;
extern const RowField& iter_skipped;
extern const RowField& iter_straggler_rank;
extern const RowField& iter_straggler_share;
extern const RowField& iter_times_us;
extern const RowField& iter_rank_times_us;
}  // namespace fields

// A field's JSON in a row (a row member's, or the row metrics' entry; null when absent). Not for
// rank-place fields (see rank_field_json).
nlohmann::json field_json(const ResultRow& row, const RowField& f);
// A field's value as a number, when it is one.
std::optional<double> number_field(const ResultRow& row, const RowField& f);
// The same from one metrics object (a rank's, or the row's).
std::optional<double> number_in(const nlohmann::json& metrics, const RowField& f);

// The figures the history stores of a row (every field with a history name but the aggregate, which has
// its own column, and rank metrics, stored per rank): a number under its history name, and an object of
// numbers (phase_us) as one figure per member, "phase_us.compute". put_history_figure puts one back where
// the row keeps it; a name no field has (a newer store's) is left out.
std::map<std::string, double> history_figures(const ResultRow& row);
void put_history_figure(ResultRow& row, const std::string& stored, double value);

// The version-2 row's scalar members, written from and read into the row by the table (the row writer
// adds the structure: ranks, groups, spread, flags, ...). read_row_fields throws nlohmann::json::exception
// or gpuscale::Error naming the field.
void write_row_fields(nlohmann::json& j, const ResultRow& row);
void read_row_fields(const nlohmann::json& j, ResultRow& row);

// The JSON Schema of a metric field's value, as the file's schema would say it (a rank metric: the
// column of such values), or null for a type the schema leaves open.
nlohmann::json metric_schema(const RowField& f);

}  // namespace gpuscale
