// The MPI communicator over "device" buffers (collectives/mpi/mpi_communicator.h), as the CUDA backend
// uses it, with host memory standing in for GPU memory so it runs anywhere: every collective is
// checked exactly in both modes (MPI on the buffers directly, and host-staged copies around each
// operation), and the staged mode really moves data through the device buffers. Run under mpirun.
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstring>
#include <map>

#include "collectives/mpi/mpi_communicator.h"

namespace gpuscale {
namespace {

// "Device" memory in host memory; counts the copies, and poisons buffers it hands out so a result
// that never went through them cannot pass.
class FakeDeviceMemory final : public MpiDeviceMemory {
 public:
  explicit FakeDeviceMemory(bool direct) : direct_(direct) {}
  std::string transport() const override { return direct_ ? "mpi-cuda-aware" : "mpi-host-staged"; }
  bool mpi_reads_device() const override { return direct_; }
  void* allocate(std::uint64_t bytes) override {
    void* p = std::malloc(bytes);
    std::memset(p, 0x7f, bytes);
    live_[p] = bytes;
    return p;
  }
  void release(void* p) override {
    live_.erase(p);
    std::free(p);
  }
  void upload(void* d, const void* h, std::uint64_t bytes) override {
    EXPECT_TRUE(inside(d, bytes));
    std::memcpy(d, h, bytes);
    ++uploads;
  }
  void download(void* h, const void* d, std::uint64_t bytes) override {
    EXPECT_TRUE(inside(d, bytes));
    std::memcpy(h, d, bytes);
    ++downloads;
  }
  int uploads = 0, downloads = 0;
  std::size_t live() const { return live_.size(); }

 private:
  bool inside(const void* p, std::uint64_t bytes) const {
    for (const auto& [base, size] : live_)
      if (p >= base && static_cast<const char*>(p) + bytes <= static_cast<const char*>(base) + size) return true;
    return false;
  }
  bool direct_;
  std::map<void*, std::uint64_t> live_;
};

void check_every_collective(bool direct) {
  auto mem = std::make_shared<FakeDeviceMemory>(direct);
  auto comm = make_mpi_communicator(MPI_COMM_WORLD, mem);
  EXPECT_EQ(comm->transport(), direct ? "mpi-cuda-aware" : "mpi-host-staged");
  for (const auto& spec : collective_table())
    for (bool in_place : {false, true})
      for (DType t : {DType::fp32, DType::int8}) {
        CollectiveCase c;
        c.coll = spec.id;
        c.dtype = t;
        c.in_place = in_place;
        c.size_bytes = 4096;
        c.seed = 77;
        if (comm->unsupported(c)) continue;
        auto runner = comm->prepare(c);
        runner->time(2);
        EXPECT_EQ(runner->check(), 0u) << spec.name << (in_place ? " in-place " : " out-of-place ") << dtype_name(t);
      }
  EXPECT_GT(mem->uploads, 0);
  EXPECT_GT(mem->downloads, 0);
  EXPECT_EQ(mem->live(), 0u);  // every buffer released with its runner
}

TEST(MpiDeviceMemory, CudaAwareMpiWorksOnTheDeviceBuffers) { check_every_collective(true); }
TEST(MpiDeviceMemory, HostStagedCopiesAroundEveryOperation) { check_every_collective(false); }

}  // namespace
}  // namespace gpuscale
