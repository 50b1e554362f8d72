#pragma once
// The result journal (FILE.journal beside FILE): how rank 0 records rows as they finish without
// rewriting the result file. JSON Lines: the first line names the run, every further line is one row
// exactly as the result file will hold it (results/result_document.h); a point's rows are appended in
// one write and fsynced. The result file is assembled from its header and these lines at the end of
// the run, when the watchdog or the sentinel seals it, and by --resume after a crash
// (docs/reliability.md). This file is the format and its reading; harness/guard/result_keeper.h writes it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

inline constexpr const char* kJournalName = "gpuscale.journal";
inline constexpr int kJournalVersion = 1;
// A journal is read whole into memory: larger ones are refused (the result file's own rows are far smaller).
inline constexpr std::uintmax_t kMaxJournalBytes = 1ULL << 30;

// FILE.journal.
std::string journal_path_for(const std::string& result_path);

// The first line (with its newline): {"journal": "gpuscale.journal", "version": 1, "run_id": ..., "attempt": n}.
std::string journal_header_line(const std::string& run_id, int attempt);

// A journal as read: its run, the rows of its whole lines (with their line numbers, 1-based), and the
// lines it cannot prove: the last one when it has no newline (the write was cut short), and any that is
// not strict JSON or not a row object.
struct JournalLines {
  std::string run_id;
  int attempt = 0;
  std::vector<std::pair<std::size_t, nlohmann::json>> rows;
  std::vector<std::size_t> truncated, unreadable;
};

// Throws gpuscale::Error("<name>: ...") when the text is not a gpuscale journal at all (its first line
// is missing, cut short or not a journal header, or of a newer version).
JournalLines parse_journal(const std::string& text, const std::string& name);

// The journal at `path`, or nothing when there is none. Throws gpuscale::Error("<path>: ...") when it
// cannot be read, is larger than `max_bytes`, or is not a journal.
std::optional<JournalLines> read_journal_file(const std::string& path, std::uintmax_t max_bytes);

// The rows of FILE's journal that can be proven, added to `doc`'s results (`doc`: FILE's valid result
// document): whole lines holding a row of the file's own plan, once each. A journal of another run (its
// run_id is not the file's) is refused: throws gpuscale::Error naming both. Returns "" or one line
// naming what was left out (cut-short, unreadable, repeated lines, rows outside the plan); rows the file
// already holds (it was sealed after them) are not a problem. --resume and gpuscale seal read through it.
std::string adopt_journal(nlohmann::json& doc, const JournalLines& journal, const std::string& file);

// "lines 4, 9 and 12" (at most `most` numbers, then "and N more").
std::string line_list(const std::vector<std::size_t>& lines, std::size_t most = 5);

}  // namespace gpuscale
