// The O_DIRECT probe of harness/benchmarks/checkpoint/fs_probe.h: a file system that refuses O_DIRECT
// (tmpfs, overlay: EINVAL) is named, the probe asks for O_DIRECT and leaves no file behind; and
// checkpoint_plan.h's rule skips a group's direct points (not buffered ones) when any rank's probe said no.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <random>

#include "harness/benchmarks/checkpoint/checkpoint_plan.h"
#include "harness/benchmarks/checkpoint/fs_probe.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

namespace fs = std::filesystem;

int g_flags = 0;
std::string g_path;

int refuse_direct(const char* path, int flags, mode_t) {
  g_flags = flags;
  g_path = path;
  errno = EINVAL;
  return -1;
}

// Opens without O_DIRECT (this machine's file system may refuse it): what the probe asked is recorded.
int allow_direct(const char* path, int flags, mode_t mode) {
  g_flags = flags;
  g_path = path;
  return ::open(path, flags & ~O_DIRECT, mode);
}

TEST(FsProbe, ODirectRefusedByTheFileSystemIsNamedAndTheProbeLeavesNothing) {
  std::mt19937_64 rng(test_seed());
  const fs::path dir = fs::temp_directory_path() / ("gpuscale-direct-" + std::to_string(rng()));
  fs::create_directories(dir);
  const auto why = direct_io_problem(dir.string(), "tmpfs", refuse_direct);
  EXPECT_NE(g_flags & O_DIRECT, 0) << "the probe asks for O_DIRECT";
  EXPECT_EQ(fs::path(g_path).parent_path(), dir) << "in the target folder: " << g_path;
  EXPECT_NE(why.find("O_DIRECT is refused by tmpfs at " + dir.string()), std::string::npos) << why;
  EXPECT_NE(why.find("Invalid argument"), std::string::npos) << why;
  EXPECT_EQ(direct_io_problem(dir.string(), "ext4", allow_direct), "");
  EXPECT_TRUE(fs::is_empty(dir)) << "the probe file is removed";
  fs::remove_all(dir);
}

TEST(CheckpointPlan, DirectPointsAreSkippedWhereAnyRanksFileSystemRefusesODirect) {
  const std::string refused = "O_DIRECT is refused by overlay at /ckpt (Invalid argument)";
  const auto skip = ckpt_direct_skip(CkptIo::direct, {"", refused, ""});
  ASSERT_TRUE(skip);
  EXPECT_NE(skip->find(refused), std::string::npos) << *skip;
  EXPECT_FALSE(ckpt_direct_skip(CkptIo::buffered, {"", refused}));
  EXPECT_FALSE(ckpt_direct_skip(CkptIo::direct, {"", ""}));
}

}  // namespace
}  // namespace gpuscale
