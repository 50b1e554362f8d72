// harness/checkpoint_io: a shard written and read back, from host memory and through a staged device
// shard (kernels/device.h's ShardStaging; here a host-memory stand-in that records its copies): what
// reaches the file is the same either way, every byte of the device shard goes to the file and comes
// back, the check finds a chunk written out of place, and a missing file is one clear error.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include "core/error.h"
#include "harness/benchmarks/checkpoint/checkpoint_io.h"
#include "test_seed.h"

namespace gpuscale {
namespace {

// A "device" shard in host memory, counting the bytes each way.
class HostStaging final : public ShardStaging {
 public:
  HostStaging(std::uint64_t shard, std::uint64_t chunk) : device(shard), buffer(chunk, 0) {}
  std::string path() const override { return "test_staging"; }
  unsigned char* host() override { return buffer.data(); }
  void to_host(std::uint64_t offset, std::uint64_t bytes) override {
    std::memcpy(buffer.data(), device.data() + offset, bytes);
    out += bytes;
  }
  void from_host(std::uint64_t offset, std::uint64_t bytes) override {
    std::memcpy(device.data() + offset, buffer.data(), bytes);
    in += bytes;
  }
  std::vector<unsigned char> device;
  std::vector<unsigned char> buffer;  // not O_DIRECT-aligned: the tests write buffered
  std::uint64_t out = 0, in = 0;
};

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()))).string();
}

std::vector<unsigned char> file_bytes(const std::string& path) {
  std::vector<unsigned char> out(std::filesystem::file_size(path));
  FILE* f = std::fopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr);
  EXPECT_EQ(std::fread(out.data(), 1, out.size(), f), out.size());
  std::fclose(f);
  return out;
}

TEST(CheckpointIo, AStagedShardReachesTheFileAsAHostOneDoesAndComesBack) {
  std::mt19937_64 gen(test_seed());
  const std::uint64_t chunk = 4096 * (1 + gen() % 8), bytes = chunk * (2 + gen() % 5) + 4096 * (gen() % 3);
  const std::uint64_t seed = gen();
  const auto host_path = temp_path("ckpt-host"), staged_path = temp_path("ckpt-staged");
  CkptBuffer source(chunk, seed), into(chunk, 0);
  write_shard(host_path, CkptIo::buffered, true, 0, bytes, source);
  CkptBuffer source2(chunk, seed);
  HostStaging staging(bytes, chunk);
  fill_staged_shard(staging, bytes, source2);
  EXPECT_EQ(staging.in, bytes);
  write_shard(staged_path, CkptIo::buffered, true, 0, bytes, source2, &staging);
  EXPECT_EQ(staging.out, bytes);  // every byte of the device shard went through the host buffer
  EXPECT_EQ(file_bytes(host_path), file_bytes(staged_path));
  // The check (into host memory) passes on both files.
  std::uint64_t wrong = 0;
  read_shard(staged_path, CkptIo::buffered, 0, bytes, into, &source2, &wrong);
  EXPECT_EQ(wrong, 0u);
  // A staged read lands in the device shard: zero it, read, and it holds the file again.
  std::fill(staging.device.begin(), staging.device.end(), 0);
  staging.in = 0;
  read_shard(staged_path, CkptIo::buffered, 0, bytes, into, nullptr, nullptr, &staging);
  EXPECT_EQ(staging.in, bytes);
  EXPECT_EQ(staging.device, file_bytes(staged_path));
  // A chunk out of place (the first two swapped) is found by the check.
  auto swapped = file_bytes(host_path);
  std::swap_ranges(swapped.begin(), swapped.begin() + static_cast<std::ptrdiff_t>(chunk),
                   swapped.begin() + static_cast<std::ptrdiff_t>(chunk));
  FILE* f = std::fopen(host_path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  std::fwrite(swapped.data(), 1, swapped.size(), f);
  std::fclose(f);
  wrong = 0;
  read_shard(host_path, CkptIo::buffered, 0, bytes, into, &source, &wrong);
  EXPECT_EQ(wrong, 2u);
  std::filesystem::remove(host_path);
  std::filesystem::remove(staged_path);
  try {
    read_shard(host_path, CkptIo::buffered, 0, bytes, into);
    FAIL() << "a missing file was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuscale
