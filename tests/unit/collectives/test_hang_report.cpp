// collectives/hang_report: who never arrived, who reports, and the one line the user reads.
#include <gtest/gtest.h>

#include "collectives/hang_report.h"

namespace gpuscale {
namespace {

const std::vector<GroupMember> kMembers = {{0, "node-a"}, {1, "node-a"}, {4, "node-b"}, {5, "node-b"}};

TEST(HangReport, MissingAreThoseNeverHeardFrom) {
  EXPECT_EQ(missing_members(4, 0, {1, 3}), std::vector<int>({2}));
  EXPECT_EQ(missing_members(4, 2, {0, 1, 3}), std::vector<int>());
  EXPECT_EQ(missing_members(4, 1, {}), std::vector<int>({0, 2, 3}));
  EXPECT_EQ(missing_members(1, 0, {}), std::vector<int>());
}

TEST(HangReport, TheLowestRankThatTimedOutReports) {
  EXPECT_EQ(reporting_member(0, {1, 3}), 0);
  EXPECT_EQ(reporting_member(3, {1, 0}), 0);
  EXPECT_EQ(reporting_member(2, {}), 2);
}

TEST(HangReport, MessageNamesTheMissingRanksAndHosts) {
  const auto m = hang_message("all_reduce fp32 sum 1G out-of-place on 4 ranks (NCCL)", 30, kMembers, 0, {2});
  EXPECT_EQ(m, "all_reduce fp32 sum 1G out-of-place on 4 ranks (NCCL) did not complete within 30 s: rank 4 (node-b) "
               "never arrived (seen from rank 0 (node-a)); the communicator was aborted");
  const auto two = hang_message("x", 2.5, kMembers, 1, {0, 3});
  EXPECT_NE(two.find("within 2.5 s: rank 0 (node-a) and rank 5 (node-b) never arrived (seen from rank 1 (node-a))"),
            std::string::npos)
      << two;
  const auto stuck = hang_message("x", 30, kMembers, 2, {});
  EXPECT_NE(stuck.find("all 4 ranks reached it"), std::string::npos) << stuck;
  EXPECT_EQ(stuck.find('\n'), std::string::npos);
}

TEST(HangReport, LongListsAreCut) {
  std::vector<GroupMember> many;
  std::vector<int> missing;
  for (int r = 0; r < 20; ++r) {
    many.push_back({r, "n" + std::to_string(r)});
    if (r > 0) missing.push_back(r);
  }
  const auto m = hang_message("x", 1, many, 0, missing);
  EXPECT_NE(m.find("rank 8 (n8) and 11 more never arrived"), std::string::npos) << m;
}

TEST(HangReport, GraceIsAFifthOfTheTimeoutWithinBounds) {
  EXPECT_DOUBLE_EQ(hang_grace_seconds(300), 10);
  EXPECT_DOUBLE_EQ(hang_grace_seconds(20), 4);
  EXPECT_DOUBLE_EQ(hang_grace_seconds(2), 1);
}

}  // namespace
}  // namespace gpuscale
