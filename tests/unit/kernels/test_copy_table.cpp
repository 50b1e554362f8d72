// Copy cases and how their bytes count (kernels/copy_table.h), and the GPU identity helpers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "test_seed.h"
#include "kernels/copy_table.h"
#include "kernels/cuda/gpu_identity.h"

namespace gpuscale {
namespace {

TEST(CopyTable, BytesCountedPerCase) {
  const std::uint64_t size = 256ULL << 20;
  EXPECT_EQ(copy_bytes_counted(CopyKind::h2d, size), size);
  EXPECT_EQ(copy_bytes_counted(CopyKind::d2h, size), size);
  EXPECT_EQ(copy_bytes_counted(CopyKind::bidir, size), 2 * size);  // both directions added
  EXPECT_EQ(copy_bytes_counted(CopyKind::d2d, size), 2 * size);    // read + written, as STREAM copy
  EXPECT_EQ(copy_bytes_counted(CopyKind::p2p_ce, size), size);
  EXPECT_EQ(copy_bytes_counted(CopyKind::p2p_sm, size), size);
  // d2d counts exactly what STREAM copy counts for the same bytes.
  EXPECT_EQ(copy_bytes_counted(CopyKind::d2d, size), stream_bytes(StreamOp::copy, size / 8, 8));
}

TEST(CopyTable, OnceCountedBytesHalveOnlyD2d) {
  const std::uint64_t size = 64ULL << 20;
  // nvbandwidth's device-to-device figure counts each byte once: half of the read + write count.
  EXPECT_EQ(copy_bytes_once(CopyKind::d2d, size), size);
  EXPECT_EQ(2 * copy_bytes_once(CopyKind::d2d, size), copy_bytes_counted(CopyKind::d2d, size));
  EXPECT_EQ(copy_counting_name(CopyKind::d2d), "read+write");
  for (const auto& c : kCopyCases) {
    if (c.kind == CopyKind::d2d) continue;
    EXPECT_EQ(copy_bytes_once(c.kind, size), copy_bytes_counted(c.kind, size)) << c.name;
    EXPECT_EQ(copy_counting_name(c.kind), "once") << c.name;
  }
  EXPECT_EQ(copy_bytes_once(CopyKind::bidir, size), 2 * size);  // two directions, different bytes
}

TEST(CopyTable, PeerModesNameAndParse) {
  for (auto m : {PeerMode::all_pairs, PeerMode::one_pair}) EXPECT_EQ(parse_peer_mode(peer_mode_name(m)), m);
  EXPECT_EQ(peer_mode_name(PeerMode::one_pair), "one-pair");
  EXPECT_FALSE(parse_peer_mode("one_pair"));
}

TEST(CopyTable, PeerTurnsPutEveryRankInExactlyOneTurn) {
  const int ranks = 2 + static_cast<int>(test_seed() % 15);
  const auto all = peer_copy_turns(PeerMode::all_pairs, ranks);
  ASSERT_EQ(all.size(), 1u);  // every pair at once
  EXPECT_EQ(static_cast<int>(all[0].size()), ranks);
  const auto one = peer_copy_turns(PeerMode::one_pair, ranks);
  ASSERT_EQ(static_cast<int>(one.size()), ranks);  // one pair at a time
  std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
  for (std::size_t t = 0; t < one.size(); ++t) {
    ASSERT_EQ(one[t].size(), 1u) << "turn " << t;
    EXPECT_EQ(one[t][0], static_cast<int>(t));
    ++seen[static_cast<std::size_t>(one[t][0])];
  }
  for (int r = 0; r < ranks; ++r) EXPECT_EQ(seen[static_cast<std::size_t>(r)], 1) << r;
  for (std::size_t i = 0; i < all[0].size(); ++i) EXPECT_EQ(all[0][i], static_cast<int>(i));
  EXPECT_TRUE(peer_copy_turns(PeerMode::one_pair, 0).empty());
}

TEST(CopyTable, KeysAndPeerCases) {
  std::set<std::string_view> names;
  for (const auto& c : kCopyCases) {
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    EXPECT_EQ(copy_spec(c.kind).name, c.name);
    EXPECT_EQ(c.peer, c.kind == CopyKind::p2p_ce || c.kind == CopyKind::p2p_sm);
    EXPECT_FALSE(c.counted.empty());
  }
  EXPECT_EQ(names.size(), kCopyCases.size());
}

TEST(CopyTable, SizesAreWholeVectors) {
  EXPECT_EQ(copy_size_rounded(256ULL << 20), 256ULL << 20);
  EXPECT_EQ(copy_size_rounded(1000), 992u);
  EXPECT_EQ(copy_size_rounded(7), 16u);
}

TEST(CopyTable, PeersAndDirections) {
  EXPECT_EQ(peer_ordinal(0, 1, 8), 1);
  EXPECT_EQ(peer_ordinal(7, 1, 8), 0);
  EXPECT_EQ(peer_ordinal(5, 7, 8), 4);
  EXPECT_EQ(peer_ordinal(0, 1, 1), 0);  // one GPU: its own (the engine then says there is no peer)
  EXPECT_EQ(parse_peer_direction("write"), PeerDirection::write);
  EXPECT_EQ(parse_peer_direction(peer_direction_name(PeerDirection::read)), PeerDirection::read);
  EXPECT_FALSE(parse_peer_direction("both"));
}

TEST(CopyTable, DataIsRandomAndReproducible) {
  EXPECT_EQ(copy_word(7, 123), copy_word(7, 123));
  EXPECT_NE(copy_word(7, 123), copy_word(8, 123));
  int same = 0;
  for (std::uint64_t i = 1; i < 1000; ++i) same += copy_word(7, i) == copy_word(7, i - 1);
  EXPECT_LT(same, 2);
}

TEST(GpuIdentity, PciIdsAndUuids) {
  EXPECT_EQ(cuda::parse_pci_id("0x2335"), 0x2335u);
  EXPECT_EQ(cuda::parse_pci_id("233B"), 0x233bu);
  EXPECT_FALSE(cuda::parse_pci_id("0x"));
  EXPECT_FALSE(cuda::parse_pci_id("0x12345"));
  EXPECT_FALSE(cuda::parse_pci_id("23g5"));
  EXPECT_EQ(cuda::format_pci_id(0x20b0), "0x20b0");
  const unsigned char b[16] = {0x8a, 0x1f, 0x22, 0x03, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  EXPECT_EQ(cuda::format_gpu_uuid(b), "GPU-8a1f2203-4455-6677-8899-aabbccddeeff");
}

TEST(GpuIdentity, PciDeviceIdReadFromSysfs) {
  const auto root = std::filesystem::temp_directory_path() / "gpuscale_test_sysfs";
  const auto dir = root / "bus/pci/devices/0000:1b:00.0";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "device") << "0x2335\n";
  EXPECT_EQ(cuda::read_pci_device_id(root.string(), "0000:1B:00.0"), 0x2335u);  // CUDA writes upper case
  EXPECT_FALSE(cuda::read_pci_device_id(root.string(), "0000:1C:00.0"));
  std::filesystem::remove_all(root);
}

TEST(GpuIdentity, FromDeviceDetails) {
  DeviceInfo d;
  d.name = "NVIDIA H200";
  d.details = {{"pci_device_id", "0x2335"}, {"compute_capability", "9.0"}, {"sm_count", 132}};
  const auto id = cuda::gpu_identity(d);
  EXPECT_EQ(id.name, "NVIDIA H200");
  EXPECT_EQ(id.pci_device_id, 0x2335u);
  EXPECT_EQ(id.cc, (cuda::ComputeCapability{9, 0}));
  EXPECT_EQ(id.sm_count, 132);
  d.details = {{"pci_device_id", nullptr}};
  EXPECT_FALSE(cuda::gpu_identity(d).pci_device_id);
  EXPECT_FALSE(cuda::gpu_identity(d).cc);
}

}  // namespace
}  // namespace gpuscale
