// history/matrix_members.h: the links and NICs of a row's pair matrices.
#include <gtest/gtest.h>

#include "history/matrix_members.h"

namespace gpuscale::history {
namespace {

using nlohmann::json;

const MemberRecord* find(const std::vector<MemberRecord>& v, const std::string& member) {
  for (const auto& m : v)
    if (m.member == member) return &m;
  return nullptr;
}

TEST(MatrixMembers, NodePairsAreLinksNamedInOrderAndRailsAreNics) {
  ResultRow row;
  // Hosts listed out of order; pair (c, a) measured only one way in a directed matrix; b's rail-0 pairs 10 and 30.
  row.matrices = json::array(
      {json{{"kind", "node"}, {"hosts", {"c", "a", "b"}}, {"directed", true},
            {"values", {{nullptr, 40, 50}, {38, nullptr, 60}, {50, 60, nullptr}}},
            {"spread_down", {{0, 0.01, 0.02}, {0.03, 0, 0.02}, {0.02, 0.02, 0}}},
            {"spread_up", {{0, 0.01, 0.02}, {0.01, 0, 0.02}, {0.02, 0.02, 0}}}},
       json{{"kind", "rail"}, {"rail", 0}, {"hosts", {"a", "b", "c"}},
            {"values", {{nullptr, 10, 20}, {10, nullptr, 30}, {20, 30, nullptr}}}},
       json{{"kind", "gpu"}, {"hosts", {"a", "a"}}, {"labels", {"GPU0", "GPU1"}},
            {"values", {{nullptr, 300}, {300, nullptr}}}, {"spread_down", {{0, 0.01}, {0.01, 0}}},
            {"spread_up", {{0, 0.01}, {0.01, 0}}}}});
  const auto m = matrix_members(row, 4);
  ASSERT_EQ(m.size(), 3u + 3u + 1u);
  const auto* ac = find(m, "a~c");
  ASSERT_NE(ac, nullptr);
  EXPECT_EQ(ac->kind, "link");
  EXPECT_EQ(ac->host, "a,c");
  EXPECT_EQ(ac->row_index, 4);
  EXPECT_DOUBLE_EQ(ac->value, 38);  // the slower direction, with its own spreads
  EXPECT_DOUBLE_EQ(ac->noise_down, 0.03);
  EXPECT_EQ(ac->reps, 2);
  const auto* nic = find(m, "b rail 0");
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->kind, "nic");
  EXPECT_DOUBLE_EQ(nic->value, 20);  // the median of 10 and 30
  EXPECT_EQ(nic->reps, 0);           // no spreads: never judged
  const auto* gpus = find(m, "a GPU0~GPU1");
  ASSERT_NE(gpus, nullptr);
  EXPECT_EQ(gpus->host, "a");
  EXPECT_DOUBLE_EQ(gpus->value, 300);
}

TEST(MatrixMembers, MalformedMatricesGiveNothing) {
  ResultRow row;
  EXPECT_TRUE(matrix_members(row, 0).empty());  // null
  row.matrices = json::array({json(3), json{{"kind", 7}}, json{{"kind", "rail"}, {"hosts", {"a"}}},
                              json{{"kind", "gpu"}, {"hosts", {"a", "a"}}, {"values", {{nullptr, 1}, {1, nullptr}}}},
                              json{{"kind", "node"}, {"hosts", {"a", "b"}}, {"values", {{nullptr, "x"}, {-1, nullptr}}}}});
  EXPECT_TRUE(matrix_members(row, 0).empty());
}

}  // namespace
}  // namespace gpuscale::history
