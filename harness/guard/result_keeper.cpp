#include "harness/guard/result_keeper.h"

#include <chrono>

#include "core/error.h"
#include "results/result_io.h"

namespace gpuscale {

void ResultKeeper::open(std::string path, bool replace_first) {
  std::lock_guard lock(mutex_);
  path_ = std::move(path);
  replace_next_ = replace_first;
}

void ResultKeeper::write(const nlohmann::json& doc) {
  std::string text = doc.dump(1) + "\n";
  std::lock_guard lock(mutex_);
  if (sealed_) return;
  write_file_atomic(path_, text, replace_next_);
  replace_next_ = true;  // from now on the file is this run's own
  last_ = std::move(text);
}

bool ResultKeeper::seal(const std::function<void(nlohmann::json&)>& finish, std::string* error) {
  std::unique_lock lock(mutex_, std::defer_lock);
  if (!lock.try_lock_for(std::chrono::seconds(10))) {
    if (error) *error = "a write of the file did not finish within 10 s";
    return false;
  }
  if (sealed_ || last_.empty()) return false;
  sealed_ = true;
  try {
    auto doc = nlohmann::json::parse(last_);
    finish(doc);
    write_file_atomic(path_, doc.dump(1) + "\n", true);
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

}  // namespace gpuscale
