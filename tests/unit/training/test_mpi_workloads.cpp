// Under mpirun with 3 ranks: the hang report's exchange (a rank that never arrives is named, one rank
// reports) and the CPU dp-step (its all-reduce really sums the ranks' gradients, its GEMMs check, and a
// wrong gradient is caught).
#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdlib>

#include "collectives/hang_report.h"
#include "core/error.h"
#include "training/cpu/cpu_dp_step.h"

namespace gpuscale {
namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

const std::vector<std::string> kHosts = {"node-a", "node-a", "node-b"};

TEST(MpiHangReport, TheRankThatNeverArrivesIsNamed) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  const auto members = group_members(comm, kHosts);
  ASSERT_EQ(members.size(), 3u);
  EXPECT_EQ(members[2].world_rank, 2);
  EXPECT_EQ(members[2].host, "node-b");
  MPI_Barrier(comm);
  if (world_rank() < 2) {  // rank 2 "hangs": it never reports
    const auto r = report_hang(comm, members, "all_reduce fp32 sum 1M out-of-place on 3 ranks (NCCL)", 5, 3);
    EXPECT_NE(r.message.find("rank 2 (node-b) never arrived"), std::string::npos) << r.message;
    EXPECT_EQ(r.report, world_rank() == 0) << "only the lowest rank that timed out reports";
  } else {
    for (int i = 0; i < 2; ++i) {  // take the two notices it would never have read
      int who = -1;
      MPI_Recv(&who, 1, MPI_INT, MPI_ANY_SOURCE, kHangTag, comm, MPI_STATUS_IGNORE);
      EXPECT_TRUE(who == 0 || who == 1);
    }
  }
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}

TEST(MpiHangReport, WhenEveryoneArrivedTheTransportIsStuck) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  MPI_Barrier(comm);
  const auto r = report_hang(comm, group_members(comm, kHosts), "x", 5, 3);
  EXPECT_NE(r.message.find("all 3 ranks reached it"), std::string::npos) << r.message;
  EXPECT_EQ(r.report, world_rank() == 0);
  MPI_Barrier(comm);
  MPI_Comm_free(&comm);
}

DpStepConfig small(DType t) { return {t, 48, 3, 20, 2 * 48 * 48 * dtype_size(t)}; }

TEST(MpiCpuDpStep, VerifiedStepSumsTheRanksGradients) {
  for (DType t : {DType::fp32, DType::fp64}) {
    auto step = make_cpu_dp_step(small(t), MPI_COMM_WORLD, 4242);
    for (auto mode : {DpMode::full, DpMode::compute_only, DpMode::comm_only}) EXPECT_GT(step->time(mode, 2), 0);
    const auto r = step->verify();
    EXPECT_EQ(r.wrong, 0u) << r.detail;

    EXPECT_EQ(r.checked, 8u * 12 + 3 * 12);
    EXPECT_EQ(step->details()["buckets"].size(), 2u);
  }
}

TEST(MpiCpuDpStep, AWrongGradientIsCaught) {
  setenv("GPUSCALE_TEST_FAULT", "wrong:dp-step", 1);
  auto step = make_cpu_dp_step(small(DType::fp32), MPI_COMM_WORLD, 99);
  const auto r = step->verify();
  unsetenv("GPUSCALE_TEST_FAULT");
  EXPECT_GE(r.wrong, 1u);
  EXPECT_NE(r.detail.find("all-reduced gradient entry"), std::string::npos) << r.detail;
}

TEST(MpiCpuDpStep, BadTypesAreRefused) {
  EXPECT_THROW(make_cpu_dp_step(small(DType::bf16), MPI_COMM_WORLD, 1), Error);
}

}  // namespace
}  // namespace gpuscale
