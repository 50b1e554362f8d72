// gpuscale run --store URL (or GPUSCALE_STORE): the URL checked before the run, and the finished run's
// result file added to the history store after it (docs/history.md). gpuscale history (cmd_history.cpp)
// reads what this stores.
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/error.h"
#include "core/term_text.h"
#include "history/history_store.h"
#include "history/run_record.h"
#include "history/store_url.h"

namespace gpuscale {

using namespace history;

std::string run_store_url(const std::string& flag) {
  std::string url = flag;
  if (const char* env = std::getenv("GPUSCALE_STORE"); url.empty() && env) url = env;
  if (!url.empty()) parse_store_url(url);
  return url;
}

int store_finished_run(const std::string& url, const std::string& path, int code) {
  if (code != kExitOk && code != kExitInvalidResult) return code;  // a partial file: --resume completes it first
  try {
    const auto record = read_run_record(path);
    const bool added = open_store(url, true)->add_run(record);
    fmt::print(stderr, "gpuscale: {}\n",
               message_line(fmt::format("{} {} as run {}", added ? "stored in" : "already in", parse_store_url(url).masked,
                                        record.id.substr(0, 12))));
    return code;
  } catch (const Error& e) {
    fmt::print(stderr, "gpuscale: warning: {}\n",
               message_line(fmt::format("the run finished but was not stored: {} (the result file {} is kept)", e.what(), path)));
    return code == kExitOk ? kExitStoreFailed : code;
  }
}

}  // namespace gpuscale
