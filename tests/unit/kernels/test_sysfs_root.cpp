// The sysfs root the CUDA device reads (kernels/sysfs_root.h): /sys unless the test-only
// GPUSCALE_TEST_SYSFS_ROOT names an existing folder by an absolute path; every other value refused in
// one line, exit 2, naming the variable.
#include "kernels/sysfs_root.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <unistd.h>

#include <gtest/gtest.h>

#include "test_seed.h"
#include "usage_error.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;
using test::has;
using test::usage_error;

// A folder name no other test or run uses: the seed's draw and the process id.
std::string fresh_name(std::mt19937_64& rng) {
  return "gpuscale-sysfs-root-" + std::to_string(rng()) + "-" + std::to_string(::getpid());
}

TEST(SysfsRoot, AnAbsoluteFolderIsTakenAsGiven) {
  std::mt19937_64 rng(test_seed());
  const auto dir = fs::temp_directory_path() / fresh_name(rng);
  fs::create_directories(dir / "bus/pci/devices");
  EXPECT_EQ(parse_test_sysfs_root(dir.string()), dir.string());
  EXPECT_EQ(parse_test_sysfs_root(dir.string() + "/"), dir.string() + "/");  // the readers join with "/"
  fs::remove_all(dir);
}

TEST(SysfsRoot, EmptyRelativeMissingOrAFileIsRefused) {
  std::mt19937_64 rng(test_seed());
  const auto name = fresh_name(rng);
  // A relative path is refused even where it exists: another rank's working directory may differ.
  fs::create_directory(name);
  const auto file = fs::temp_directory_path() / (name + ".file");
  std::ofstream(file) << "0x10de\n";
  const std::pair<std::string, std::string> cases[] = {
      {"", "set but empty"},
      {name, "is a relative path"},
      {"./" + name, "is a relative path"},
      {(fs::temp_directory_path() / name / "missing").string(), "is not an existing folder"},
      {file.string(), "is not an existing folder"},
      {"/" + name + "\n/x\x1b[2J", "is not an existing folder"},  // shown on one line, controls made '?'
  };
  for (const auto& [text, why] : cases) {
    const auto e = usage_error([&] { parse_test_sysfs_root(text); });
    EXPECT_TRUE(has(e, "invalid GPUSCALE_TEST_SYSFS_ROOT")) << text << ": " << e;
    EXPECT_TRUE(has(e, why)) << text << ": " << e;
  }
  fs::remove(name);
  fs::remove(file);
}

TEST(SysfsRoot, FromTheEnvironment) {
  std::mt19937_64 rng(test_seed());
  unsetenv(kTestSysfsRootEnv);
  EXPECT_EQ(sysfs_root(), "/sys");
  const auto dir = fs::temp_directory_path() / fresh_name(rng);
  fs::create_directories(dir);
  setenv(kTestSysfsRootEnv, dir.c_str(), 1);
  EXPECT_EQ(sysfs_root(), dir.string());
  fs::remove_all(dir);  // the same value, now naming nothing: refused where it is read, not cached
  EXPECT_TRUE(has(usage_error([] { sysfs_root(); }), "is not an existing folder"));
  unsetenv(kTestSysfsRootEnv);
}

}  // namespace
}  // namespace gpuscale
