// gpuscale seal FILE: a result file whose run ended before rank 0 could write it whole (rank 0 was
// killed, or a second signal ended it at once) gets the rows of its journal (FILE.journal, results/
// result_journal.h) and a summary saying so; the journal goes. --resume does the same and measures
// the rest; seal is for reading what was measured without measuring more.
#include <filesystem>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/term_text.h"
#include "harness/run/resume.h"
#include "harness/run/run_summary.h"
#include "results/result_document.h"
#include "results/result_file.h"
#include "results/result_io.h"
#include "results/result_journal.h"
#include "results/result_stream.h"

namespace gpuscale {
namespace {

int seal(const std::string& file) {
  auto doc = read_result_document(file);
  const auto journal_file = journal_path_for(file);
  const auto journal = read_journal_file(journal_file, kMaxJournalBytes);
  if (!journal) {
    fmt::print("{}: no journal beside it ({}): nothing to seal\n", file, journal_file);
    return kExitOk;
  }
  const std::size_t before = doc.at("results").size();
  const auto note = adopt_journal(doc, *journal, file);
  if (!note.empty()) fmt::print(stderr, "gpuscale: warning: {}\n", message_line(note));
  const std::size_t added = doc.at("results").size() - before;
  if (added > 0 || doc.at("summary").at("exit_code").is_null()) {
    if (doc.at("plan").contains("point_list")) order_rows_by_plan(doc["results"], doc.at("plan").at("point_list"));
    std::vector<ResultRow> rows;
    std::vector<std::string> lines;
    for (const auto& r : doc.at("results")) {
      rows.push_back(r.get<ResultRow>());
      lines.push_back(result_row_line(r));
    }
    auto summary = summary_json(rows, false, 0, "the run ended before rank 0 wrote the file whole: gpuscale seal took "
                                                 "the rows from its journal");
    summary["exit_code"] = nullptr;  // the run's own was never known
    doc["summary"] = summary;
    write_file_atomic(file, result_document_text(doc, lines), true);
  }
  std::error_code ec;
  std::filesystem::remove(journal_file, ec);
  fmt::print("{}: sealed: {} row(s) from {}, {} in all\n", file, added, journal_file, doc.at("results").size());
  return kExitOk;
}

}  // namespace

void add_seal_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("seal", "write a result file whole from its journal after rank 0 ended early");
  auto file = std::make_shared<std::string>();
  cmd->add_option("file", *file, "result JSON file (its journal is FILE.journal)")->required();
  cmd->callback([&action, file] { action = [file] { return seal(*file); }; });
}

}  // namespace gpuscale
