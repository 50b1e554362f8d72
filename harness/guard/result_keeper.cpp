#include "harness/guard/result_keeper.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "results/result_document.h"
#include "results/result_io.h"
#include "results/result_journal.h"

namespace gpuscale {
namespace {

// The whole of `text` to `fd`, then fsync. Throws gpuscale::Error naming `path`.
void write_all(int fd, const std::string& text, const std::string& path) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)), 1);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) throw Error(fmt::format("cannot write '{}': {}", path, std::strerror(errno)), 1);
}

}  // namespace

ResultKeeper::~ResultKeeper() { close_journal(); }

void ResultKeeper::close_journal() {
  if (journal_fd_ >= 0) ::close(journal_fd_);
  journal_fd_ = -1;
}

void ResultKeeper::open(std::string path, bool replace_first, nlohmann::json header, std::vector<Line> kept,
                        const std::string& run_id, int attempt) {
  std::lock_guard lock(mutex_);
  path_ = std::move(path);
  journal_ = journal_path_for(path_);
  rows_ = std::move(kept);
  header["reliability"]["journal"] = std::filesystem::path(journal_).filename().string();
  write_whole(std::move(header), replace_first);
  // The file now holds every kept row, so an older journal beside it has nothing left to give.
  journal_fd_ = ::open(journal_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (journal_fd_ < 0) throw Error(fmt::format("cannot write '{}': {}", journal_, std::strerror(errno)), 1);
  const std::string head = journal_header_line(run_id, attempt);
  write_all(journal_fd_, head, journal_);
  bytes_ += head.size();
}

void ResultKeeper::append(std::vector<Line> rows, const nlohmann::json& summary) {
  std::lock_guard lock(mutex_);
  if (sealed_ || journal_fd_ < 0) return;
  std::string text;
  for (const auto& r : rows) text += r.text + "\n";
  write_all(journal_fd_, text, journal_);
  bytes_ += text.size();
  header_["summary"] = summary;
  for (auto& r : rows) rows_.push_back(std::move(r));
}

void ResultKeeper::write_whole(nlohmann::json header, bool replace) {
  std::stable_sort(rows_.begin(), rows_.end(), [](const Line& a, const Line& b) {
    return std::tie(a.point, a.gpu_count) < std::tie(b.point, b.gpu_count);
  });
  std::vector<std::string> lines;
  lines.reserve(rows_.size());
  for (const auto& r : rows_) lines.push_back(r.text);
  // The count includes this write, whose size depends on the count's own digits: settle it.
  std::uintmax_t total = bytes_;
  std::string text;
  for (int i = 0; i < 4; ++i) {
    header["reliability"]["bytes_written"] = total;
    text = result_document_text(header, lines);
    if (bytes_ + text.size() == total) break;
    total = bytes_ + text.size();
  }
  write_file_atomic(path_, text, replace);
  bytes_ += text.size();
  header_ = std::move(header);
}

void ResultKeeper::finish(nlohmann::json header) {
  std::lock_guard lock(mutex_);
  if (sealed_ || path_.empty()) return;
  sealed_ = true;
  write_whole(std::move(header), true);
  close_journal();
  std::error_code ec;
  std::filesystem::remove(journal_, ec);  // the file holds every row now
}

bool ResultKeeper::seal(const std::function<void(nlohmann::json&)>& finish, std::string* error) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::seconds(10))) {
    if (error) *error = "a write of the file did not finish within 10 s";
    return false;
  }
  if (sealed_ || header_.is_null()) return false;
  sealed_ = true;
  try {
    nlohmann::json header = header_;
    finish(header);
    write_whole(std::move(header), true);
    close_journal();
    std::error_code ec;
    std::filesystem::remove(journal_, ec);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace gpuscale
