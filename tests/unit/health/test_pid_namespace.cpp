// health/pid_namespace: the initial PID namespace's inode or a single NSpid entry is the host's view;
// another inode or a nested NSpid is a namespace of our own; nothing readable is unknown. The /proc
// tree is a directory made here, its ns link a dangling symlink as the kernel's is to readlink.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "health/pid_namespace.h"
#include "test_seed.h"

namespace gpuscale::health {
namespace {

namespace fs = std::filesystem;

TEST(PidNamespace, ClassifiedFromTheNsLinkAndNSpid) {
  EXPECT_EQ(classify_pid_space("pid:[4026531836]", "463"), PidSpace::host);
  EXPECT_EQ(classify_pid_space("pid:[4026532511]", "17"), PidSpace::separate);  // a container's /proc
  EXPECT_EQ(classify_pid_space("", "81234\t7"), PidSpace::separate);           // nested, host's /proc
  EXPECT_EQ(classify_pid_space("pid:[4026531836]", "81234\t7"), PidSpace::separate);
  EXPECT_EQ(classify_pid_space("", "463"), PidSpace::unknown);
  EXPECT_EQ(classify_pid_space("", ""), PidSpace::unknown);
  EXPECT_EQ(classify_pid_space("garbage", ""), PidSpace::unknown);
}

TEST(PidNamespace, ReadFromAProcTree) {
  std::mt19937_64 rng(test_seed());
  const fs::path root = fs::temp_directory_path() / ("gpuscale-proc-" + std::to_string(rng()));
  fs::remove_all(root);
  fs::create_directories(root / "self" / "ns");
  const auto inode = 4026532000ULL + rng() % 100000;
  fs::create_symlink("pid:[" + std::to_string(inode) + "]", root / "self" / "ns" / "pid");
  std::ofstream(root / "self" / "status") << "Name:\tgpuscale\nNSpid:\t" << 1 + rng() % 1000 << "\nVmRSS:\t1 kB\n";
  EXPECT_EQ(this_pid_space(root.string()), PidSpace::separate);
  fs::remove(root / "self" / "ns" / "pid");
  fs::create_symlink("pid:[4026531836]", root / "self" / "ns" / "pid");
  EXPECT_EQ(this_pid_space(root.string()), PidSpace::host);
  fs::remove_all(root / "self" / "ns");
  EXPECT_EQ(this_pid_space(root.string()), PidSpace::unknown);
  fs::remove_all(root);
  EXPECT_EQ(this_pid_space(root.string()), PidSpace::unknown);
}

}  // namespace
}  // namespace gpuscale::health
