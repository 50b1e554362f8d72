#pragma once
// Rank 0's result file and the last document written to it. The run loop writes through it after every
// benchmark point; when the run ends abnormally (a point stalls, a rank is lost) the watchdog's or the
// sentinel's thread seals the file: the last document written, with its summary saying what happened,
// written once more, after which the run loop's writes are dropped. Either way the file on disk is a
// whole, valid document holding every point finished before the end.
#include <functional>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace gpuscale {

class ResultKeeper {
 public:
  // `path`: where results go. The first write never replaces an existing file unless `replace_first`
  // (--force, or --resume into the same file): a file that appeared since the start is refused.
  void open(std::string path, bool replace_first);
  const std::string& path() const { return path_; }

  // Writes the whole document atomically (the run loop). Does nothing once sealed.
  void write(const nlohmann::json& doc);
  // Applies `finish` to the last document written and writes it; later writes do nothing. Safe from
  // any thread, once: returns false (and writes nothing) when already sealed, nothing was written, or
  // a write in progress does not end within 10 s. Throws nothing: a failure is returned in `error`.
  bool seal(const std::function<void(nlohmann::json&)>& finish, std::string* error);

 private:
  std::timed_mutex mutex_;  // seal() waits a bounded time for a write in progress (a hung file system)
  std::string path_;
  bool replace_next_ = false;
  bool sealed_ = false;
  std::string last_;  // the last document written, as written
};

}  // namespace gpuscale
