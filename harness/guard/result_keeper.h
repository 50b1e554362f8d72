#pragma once
// Rank 0's result file and its journal (results/result_journal.h). The file is written twice: at the
// start (the header, and a resumed run's kept rows), so it is a valid, incomplete result from the first
// moment, and at the end (the header and every row). In between, each point's rows are appended to
// FILE.journal in one fsynced write: every byte of a row is written once to the journal and once to the
// final file, whatever the plan, so the bytes written stay under three times the final file
// (reliability.bytes_written says how many). When the run ends abnormally (a point stalls, a rank is
// lost) the watchdog's or the sentinel's thread seals the file instead: the header with its summary
// saying what happened and every row appended so far, after which the run loop's calls do nothing.
// When rank 0 itself dies, the journal is what --resume reads.
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpuscale {

class ResultKeeper {
 public:
  // A row as the file holds it (results/result_document.h: result_row_line) and where it sorts: its
  // point's place in the plan, then its GPU count (a resumed run's kept and new rows interleave).
  struct Line {
    std::size_t point = 0;
    int gpu_count = 0;
    std::string text;
  };

  // Writes `path` (the header with the `kept` rows) atomically, never over an existing file unless
  // `replace_first` (--force, or --resume into the same file), then starts the journal beside it with
  // its header line naming `run_id`. Throws gpuscale::Error.
  void open(std::string path, bool replace_first, nlohmann::json header, std::vector<Line> kept,
            const std::string& run_id, int attempt);
  const std::string& path() const { return path_; }
  const std::string& journal_path() const { return journal_; }

  // One point's rows, appended to the journal in one write and fsynced; `summary` becomes the header's
  // (what a seal starts from). Does nothing once sealed. Throws gpuscale::Error when the write fails.
  void append(std::vector<Line> rows, const nlohmann::json& summary);
  // The run's end: the file becomes `header` with every row (reliability.bytes_written set), atomically,
  // and the journal goes. Does nothing once sealed. Throws gpuscale::Error.
  void finish(nlohmann::json header);
  // Applies `finish` to the last header and writes the file with every row; later calls do nothing.
  // Safe from any thread, once: returns false (and writes nothing) when already sealed, nothing was
  // written, or a write in progress does not end within 10 s. Throws nothing: a failure is returned in
  // `error`.
  bool seal(const std::function<void(nlohmann::json&)>& finish, std::string* error);

  std::uintmax_t bytes_written() const { return bytes_; }
  ~ResultKeeper();

 private:
  void write_whole(nlohmann::json header, bool replace);  // header + rows_, bytes_written inside; mutex_ held
  void close_journal();

  std::timed_mutex mutex_;  // seal() waits a bounded time for a write in progress (a hung file system)
  std::string path_, journal_;
  int journal_fd_ = -1;
  bool sealed_ = false;
  nlohmann::json header_;   // the last header given (null until open)
  std::vector<Line> rows_;  // every row so far, as written
  std::uintmax_t bytes_ = 0;
};

}  // namespace gpuscale
