// harness/checkpoint_plan and harness/fs_probe: a checkpoint's shards tile it exactly (every byte once,
// aligned for O_DIRECT, in a shared file or one per rank) for random sizes and rank counts; sizes that
// cannot be cut and directories without room are refused with the reason; mountinfo parsed and the
// mount holding a path found (the longest prefix, a later mount over the same point winning).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/benchmarks/checkpoint/checkpoint_plan.h"
#include "harness/benchmarks/checkpoint/fs_probe.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

TEST(CheckpointPlan, ShardsTileTheCheckpointAligned) {
  std::mt19937_64 gen(test_seed());
  for (int trial = 0; trial < 500; ++trial) {
    const int ranks = 1 + static_cast<int>(gen() % 64);
    const std::uint64_t total = kCkptAlignment * (static_cast<std::uint64_t>(ranks) + gen() % 100000);
    ASSERT_FALSE(ckpt_size_problem(total, ranks));
    std::uint64_t next = 0, sum = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto s = ckpt_shard(total, ranks, r, CkptLayout::shared_file);
      EXPECT_EQ(s.offset, next) << "rank " << r << " of " << ranks;
      EXPECT_EQ(s.offset % kCkptAlignment, 0u);
      EXPECT_EQ(s.bytes % kCkptAlignment, 0u);
      EXPECT_GT(s.bytes, 0u);
      next = s.offset + s.bytes;
      sum += s.bytes;
      const auto own = ckpt_shard(total, ranks, r, CkptLayout::file_per_rank);
      EXPECT_EQ(own.offset, 0u);
      EXPECT_EQ(own.bytes, s.bytes);
    }
    EXPECT_EQ(sum, total);
  }
}

TEST(CheckpointPlan, RefusalsSayWhy) {
  EXPECT_NE(ckpt_size_problem(0, 4)->find("0 bytes"), std::string::npos);
  EXPECT_NE(ckpt_size_problem((1ULL << 30) + 100, 4)->find("not a whole number of 4096-byte blocks"), std::string::npos);
  EXPECT_NE(ckpt_size_problem(8192, 4)->find("cannot give each of 4 ranks"), std::string::npos);
  EXPECT_FALSE(ckpt_size_problem(2ULL << 30, 4));
  EXPECT_EQ(ckpt_space_needed(2000), 2100u);
  EXPECT_FALSE(ckpt_space_problem("/scratch", 3ULL << 30, 2ULL << 30));
  const auto why = ckpt_space_problem("/scratch", 1ULL << 30, 2ULL << 30);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("/scratch has 1.00 GiB free, a checkpoint of 2.00 GiB needs 2.10 GiB"), std::string::npos) << *why;
  EXPECT_EQ(ckpt_file_name("9f2c", CkptLayout::file_per_rank, 7), "gpuscale-ckpt-9f2c-r7.bin");
  EXPECT_EQ(ckpt_file_name("9f2c", CkptLayout::shared_file, 4), "gpuscale-ckpt-9f2c-g4.bin");
}

// A shared file: skipped on a node-local file system whose ranks span hosts, refused when the ranks see
// different file systems, measured otherwise (one host; or a parallel file system across hosts).
TEST(CheckpointPlan, ASharedFileNeedsOneFileSystemAndOneHostWhenLocal) {
  const double lustre = ckpt_fs_key("lustre", "10.0.0.1@tcp:/scratch"), nvme = ckpt_fs_key("ext4", "/dev/nvme0n1");
  EXPECT_NE(lustre, nvme);
  EXPECT_NE(ckpt_fs_key("ext4", "/dev/nvme0n1"), ckpt_fs_key("ext4", "/dev/nvme1n1"));
  EXPECT_NE(ckpt_fs_key("ab", "c"), ckpt_fs_key("a", "bc"));  // the separator keeps type and source apart
  EXPECT_EQ(ckpt_fs_key("xfs", "/dev/sda"), std::floor(ckpt_fs_key("xfs", "/dev/sda")));  // exact in a double
  EXPECT_TRUE(ckpt_node_local_fs("ext4"));
  EXPECT_TRUE(ckpt_node_local_fs("tmpfs"));
  EXPECT_FALSE(ckpt_node_local_fs("lustre"));
  EXPECT_FALSE(ckpt_node_local_fs("nfs4"));
  EXPECT_FALSE(ckpt_node_local_fs("fuse.weka"));  // not known: may be shared

  using K = CkptSharedVerdict::Kind;
  EXPECT_EQ(ckpt_shared_verdict({{0, "a", nvme}, {1, "a", nvme}}, "ext4").kind, K::ok);
  const auto spans = ckpt_shared_verdict({{0, "a", nvme}, {1, "a", nvme}, {2, "b", nvme}}, "ext4");
  EXPECT_EQ(spans.kind, K::skip);
  EXPECT_NE(spans.why.find("cannot span hosts a and b: --ckpt-dir is on ext4, local to each node"), std::string::npos)
      << spans.why;
  EXPECT_EQ(ckpt_shared_verdict({{0, "a", lustre}, {4, "b", lustre}}, "lustre").kind, K::ok);
  const auto differ = ckpt_shared_verdict({{0, "a", lustre}, {4, "b", nvme}}, "lustre");
  EXPECT_EQ(differ.kind, K::refuse);
  EXPECT_NE(differ.why.find("world ranks 0 and 4 see it on different file systems"), std::string::npos) << differ.why;
}

TEST(FsProbe, MountinfoAndTheMountOfAPath) {
  const auto mounts = parse_mountinfo(
      "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
      "30 22 0:27 / /scratch rw,nosuid - lustre 10.0.0.1@o2ib:/fs rw,flock\n"
      "31 22 0:28 / /mnt/my\\040disk rw master:2 - xfs /dev/nvme0n1 rw,attr2\n"
      "garbage line\n"
      "32 30 0:29 / /scratch rw - nfs4 srv:/x rw,vers=4.2\n");
  ASSERT_EQ(mounts.size(), 4u);
  EXPECT_EQ(mounts[0].fs_type, "ext4");
  EXPECT_EQ(mounts[0].options, "rw,relatime,rw,errors=remount-ro");
  EXPECT_EQ(mounts[2].mount_point, "/mnt/my disk");
  EXPECT_EQ(mount_of(mounts, "/home/u")->fs_type, "ext4");
  EXPECT_EQ(mount_of(mounts, "/scratch/ckpt")->fs_type, "nfs4");  // mounted over the lustre one
  EXPECT_EQ(mount_of(mounts, "/scratchpad")->fs_type, "ext4");    // a name prefix is not a path prefix
  EXPECT_EQ(mount_of(mounts, "/mnt/my disk/a")->fs_type, "xfs");
  EXPECT_FALSE(mount_of({}, "/x"));
}

TEST(FsProbe, ProbesADirectoryOrSaysWhyNot) {
  const auto tmp = probe_fs("/tmp");
  EXPECT_TRUE(tmp.problem.empty()) << tmp.problem;
  ASSERT_TRUE(tmp.mount);
  EXPECT_FALSE(tmp.mount->fs_type.empty());
  ASSERT_TRUE(tmp.free_bytes);
  EXPECT_GT(*tmp.total_bytes, 0u);
  EXPECT_NE(probe_fs("/nonexistent/ckpt").problem.find("No such file"), std::string::npos);
  EXPECT_NE(probe_fs("/etc/hostname").problem.find("is not a directory"), std::string::npos);
}

}  // namespace
}  // namespace gpuscale
