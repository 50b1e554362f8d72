#include "kernels/sysfs_root.h"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/term_text.h"

namespace gpuscale {

std::string parse_test_sysfs_root(std::string_view text) {
  const std::filesystem::path root(text);
  const auto shown = terminal_quote(text, 200);
  if (text.empty())
    throw Error(fmt::format("invalid {}: it is set but empty (unset it for {}, or name the folder of a test's "
                            "sysfs tree)",
                            kTestSysfsRootEnv, kSysfsRoot));
  if (!root.is_absolute())
    throw Error(fmt::format("invalid {}: '{}' is a relative path (give an absolute one: every rank resolves it "
                            "from its own working directory)",
                            kTestSysfsRootEnv, shown));
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec))
    throw Error(fmt::format("invalid {}: '{}' is not an existing folder{}", kTestSysfsRootEnv, shown,
                            ec ? fmt::format(" ({})", ec.message()) : std::string()));
  return std::string(text);
}

std::string sysfs_root() {
  const char* env = std::getenv(kTestSysfsRootEnv);
  return env == nullptr ? std::string(kSysfsRoot) : parse_test_sysfs_root(env);
}

}  // namespace gpuscale
