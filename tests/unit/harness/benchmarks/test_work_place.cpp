// Where a collective's group runs, as a member sees it (harness/benchmarks/work_place.h): what a
// planted NIC or link fault (core/fault_plan.h) acts on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "harness/benchmarks/work_place.h"

namespace gpuscale {
namespace {

TEST(WorkPlace, LeavesTheHostAndLocalPeers) {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "a"};  // local ranks 0 1 0 1 2
  auto w = work_place_of({0, 1}, hosts, 1);
  EXPECT_FALSE(w.leaves_host);
  EXPECT_EQ(w.local_peers, (std::vector<int>{0, 1}));
  w = work_place_of({1, 3}, hosts, 1);  // a rail pair: a's rank 1 with b's rank 1
  EXPECT_TRUE(w.leaves_host);
  EXPECT_EQ(w.local_peers, (std::vector<int>{1}));
  w = work_place_of({0, 1, 2, 3, 4}, hosts, 3);
  EXPECT_TRUE(w.leaves_host);
  EXPECT_EQ(w.local_peers, (std::vector<int>{0, 1}));
  w = work_place_of({4, 0}, hosts, 4);
  EXPECT_FALSE(w.leaves_host);
  EXPECT_EQ(w.local_peers, (std::vector<int>{2, 0}));
}

}  // namespace
}  // namespace gpuscale
