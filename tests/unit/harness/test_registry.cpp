// harness/registry: benchmark selection by key and group, registry order, unknown names, and
// filtering by backend and device.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "collectives/collective_table.h"
#include "core/error.h"
#include "harness/registry.h"
#include "kernels/stream_table.h"

namespace gpuscale {
namespace {

std::vector<std::string> keys(const std::vector<const Benchmark*>& v) {
  std::vector<std::string> out;
  for (const auto* b : v) out.push_back(b->key());
  return out;
}

std::vector<std::string> stream_keys() {
  std::vector<std::string> out;
  for (const auto& k : kStreamKernels) out.push_back("stream." + std::string(k.name));
  return out;
}

std::vector<std::string> collective_keys() {
  std::vector<std::string> out;
  for (const auto& c : collective_table()) out.push_back(std::string(c.name));
  return out;
}

// A device that only has some STREAM kernels, to see select() drop the others.
class PartialDevice final : public Device {
 public:
  const DeviceInfo& info() const override { return info_; }
  std::vector<StreamOp> stream_ops() const override { return {StreamOp::copy, StreamOp::triad}; }
  std::vector<DType> stream_dtypes() const override { return {DType::fp64}; }
  std::uint64_t default_stream_array_bytes() const override { return 1 << 20; }
  std::unique_ptr<StreamArrays> make_stream(DType, std::uint64_t, std::uint64_t) override { return nullptr; }
  std::vector<DType> gemm_dtypes() const override { return {DType::fp64}; }
  std::optional<std::string> gemm_unsupported(DType) const override { return std::nullopt; }
  std::unique_ptr<GemmProblem> make_gemm(DType, const GemmShape&, std::uint64_t) override { return nullptr; }

 private:
  DeviceInfo info_;
};

template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Registry, KeysAreUniqueAndDescribed) {
  std::set<std::string> seen;
  for (const auto& b : registry().all()) {
    EXPECT_TRUE(seen.insert(b->key()).second) << "duplicate " << b->key();
    EXPECT_FALSE(b->description().empty()) << b->key();
    EXPECT_FALSE(b->unit().empty()) << b->key();
    EXPECT_EQ(registry().find(b->key()), b.get());
  }
  EXPECT_EQ(registry().find("nope"), nullptr);
  EXPECT_EQ(registry().find("stream"), nullptr);  // a group is not a key
  for (const auto& k : stream_keys()) EXPECT_EQ(registry().find(k)->group(), "stream");
  for (const auto& k : collective_keys()) EXPECT_EQ(registry().find(k)->scope(), Scope::collective);
  EXPECT_EQ(registry().find("gemm")->unit(), "TFLOP/s");
}

TEST(Registry, EmptySelectionIsEveryCpuBenchmarkInRegistryOrder) {
  std::vector<std::string> want;
  for (const auto& b : registry().all()) {
    if (b->info().opt_in) continue;
    const auto bk = b->backends();
    if (std::find(bk.begin(), bk.end(), "cpu") != bk.end()) want.push_back(b->key());
  }
  const auto got = keys(registry().select({}, "cpu", nullptr));
  EXPECT_EQ(got, want);
  // Stream kernels in table order, then GEMM, then the collectives in table order, then dp-step; the
  // fleet benchmarks and alltoallv only when named ("all,fleet", "all,alltoallv").
  std::vector<std::string> expected = stream_keys();
  expected.push_back("gemm");
  for (const auto& k : collective_keys())
    if (k != "alltoallv") expected.push_back(k);
  expected.push_back("dp-step");
  EXPECT_EQ(got, expected);
  EXPECT_EQ(keys(registry().select({"all"}, "cpu", nullptr)), expected);
  expected.push_back("pairs");
  expected.push_back("gpu_pairs");
  EXPECT_EQ(keys(registry().select({"all", "fleet"}, "cpu", nullptr)), expected);
  auto with_a2av = keys(registry().select({"all", "alltoallv"}, "cpu", nullptr));
  EXPECT_EQ(with_a2av.size(), got.size() + 1);
  EXPECT_EQ(std::count(with_a2av.begin(), with_a2av.end(), "alltoallv"), 1);
}

TEST(Registry, GroupsExpandAndOrderIsTheRegistrys) {
  EXPECT_EQ(keys(registry().select({"stream"}, "cpu", nullptr)), stream_keys());
  EXPECT_EQ(keys(registry().select({"collective"}, "cpu", nullptr)), collective_keys());
  EXPECT_EQ(keys(registry().select({"training"}, "cuda", nullptr)), (std::vector<std::string>{"dp-step", "train-step"}));
  EXPECT_EQ(keys(registry().select({"fleet"}, "cpu", nullptr)), (std::vector<std::string>{"pairs", "gpu_pairs"}));
  EXPECT_EQ(keys(registry().select({"gemm", "stream.copy"}, "cpu", nullptr)),
            (std::vector<std::string>{"stream.copy", "gemm"}));
  EXPECT_EQ(keys(registry().select({"sendrecv", "all_reduce", "stream.triad"}, "cpu", nullptr)),
            (std::vector<std::string>{"stream.triad", "all_reduce", "sendrecv"}));
  // Duplicates (a key and its group, or a key twice) are measured once.
  EXPECT_EQ(keys(registry().select({"stream.triad", "stream", "stream.triad"}, "cpu", nullptr)), stream_keys());
}

TEST(Registry, UnknownNamesAreErrorsNamingThem) {
  auto msg = error_of([] { registry().select({"stream", "stream.foo"}, "cpu", nullptr); });
  EXPECT_NE(msg.find("'stream.foo'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("stream.triad"), std::string::npos) << msg;  // lists the known keys
  msg = error_of([] { registry().check_names({"gemm", "bogus"}); });
  EXPECT_NE(msg.find("'bogus'"), std::string::npos) << msg;
  EXPECT_NO_THROW(registry().check_names({"all", "stream", "gemm", "collective", "all_reduce", "stream.dot"}));
  EXPECT_NO_THROW(registry().check_names({}));
  EXPECT_THROW(registry().check_names({"Stream"}), Error);  // names are case-sensitive
  EXPECT_THROW(registry().check_names({""}), Error);
}

TEST(Registry, BackendAndDeviceFilter) {
  EXPECT_TRUE(registry().select({}, "rocm", nullptr).empty());
  const auto msg = error_of([] { registry().select({"gemm"}, "rocm", nullptr); });
  EXPECT_NE(msg.find("rocm"), std::string::npos) << msg;
  // The CUDA backend runs everything the CPU backend does, plus the copy benchmarks.
  const auto cuda = keys(registry().select({}, "cuda", nullptr)), cpu = keys(registry().select({}, "cpu", nullptr));
  std::vector<std::string> cuda_only;
  for (const auto& k : cuda)
    if (std::find(cpu.begin(), cpu.end(), k) == cpu.end()) cuda_only.push_back(k);
  EXPECT_EQ(cuda_only, (std::vector<std::string>{"copy.h2d", "copy.d2h", "copy.bidir", "copy.d2d", "copy.p2p_ce",
                                                 "copy.p2p_sm"}));
  EXPECT_EQ(cuda.size(), cpu.size() + cuda_only.size());
  EXPECT_EQ(keys(registry().select({"copy"}, "cuda", nullptr)), cuda_only);


  const PartialDevice dev;
  EXPECT_EQ(keys(registry().select({"stream"}, "cpu", &dev)),
            (std::vector<std::string>{"stream.copy", "stream.triad"}));
  const auto all = keys(registry().select({}, "cpu", &dev));
  EXPECT_EQ(std::count(all.begin(), all.end(), "stream.scale"), 0);
  EXPECT_EQ(std::count(all.begin(), all.end(), "gemm"), 1);
  EXPECT_EQ(all.size(), 2 + 1 + collective_keys().size() - 1 + 1);  // alltoallv opt-in; + dp-step
  // A device without a copy engine (copies() is null) does not run the copy benchmarks.
  EXPECT_TRUE(registry().select({"copy"}, "cuda", &dev).empty());
}

// `--benchmarks all,gemm` passes check_names ("all" is accepted there), but select() only treats "all"
// specially when it is the sole name; in a list it matches nothing and is dropped silently, so only
// GEMM is measured. Disabled until harness/registry.cpp is fixed.
TEST(Registry, AllInsideAListSelectsEverything) {
  EXPECT_EQ(keys(registry().select({"all", "gemm"}, "cpu", nullptr)), keys(registry().select({}, "cpu", nullptr)));
}

}  // namespace
}  // namespace gpuscale
