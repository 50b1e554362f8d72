// world/node_tree: ranks grouped by host with the lowest rank leading, and the packing of a node's
// strings for the second level of a gather (random contents, any bytes, any placement of ranks).
#include <gtest/gtest.h>

#include <random>

#include "core/error.h"
#include "world/node_tree.h"

namespace gpuscale {
namespace {

std::string random_bytes(std::mt19937_64& rng) {
  std::string s(rng() % 40, '\0');
  for (auto& c : s) c = static_cast<char>(rng() % 256);  // NUL and high bytes too
  return s;
}

TEST(NodeTree, InterleavedHostsLeadersAndMembers) {
  const auto t = node_tree({"b", "a", "b", "c", "a", "a"});
  EXPECT_EQ(t.leader, (std::vector<int>{0, 1, 0, 3, 1, 1}));
  EXPECT_EQ(t.node, (std::vector<int>{0, 1, 0, 2, 1, 1}));
  EXPECT_EQ(t.members, (std::vector<std::vector<int>>{{0, 2}, {1, 4, 5}, {3}}));
}

TEST(NodeTree, RandomPlacementsKeepEveryRankOnceAndRankZeroLeads) {
  std::mt19937_64 rng(1501);
  for (int trial = 0; trial < 100; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 40), hosts = 1 + static_cast<int>(rng() % 6);
    std::vector<std::string> h;
    for (int r = 0; r < ranks; ++r) h.push_back("n" + std::to_string(rng() % static_cast<unsigned>(hosts)));
    const auto t = node_tree(h);
    EXPECT_EQ(t.leader[0], 0);
    std::vector<int> seen(static_cast<std::size_t>(ranks), 0);
    for (std::size_t n = 0; n < t.members.size(); ++n) {
      ASSERT_FALSE(t.members[n].empty());
      if (n > 0) {
        EXPECT_LT(t.members[n - 1].front(), t.members[n].front());  // nodes ordered by leader
      }
      for (int r : t.members[n]) {
        ++seen[static_cast<std::size_t>(r)];
        EXPECT_EQ(h[static_cast<std::size_t>(r)], h[static_cast<std::size_t>(t.members[n].front())]);
        EXPECT_EQ(t.leader[static_cast<std::size_t>(r)], t.members[n].front());
        EXPECT_EQ(t.node[static_cast<std::size_t>(r)], static_cast<int>(n));
      }
    }
    EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(ranks), 1));
  }
}

TEST(NodeTree, PackedStringsComeBackInRankOrder) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 50; ++trial) {
    const int ranks = 1 + static_cast<int>(rng() % 30);
    std::vector<std::string> hosts, mine;
    for (int r = 0; r < ranks; ++r) {
      hosts.push_back("h" + std::to_string(rng() % 4));
      mine.push_back(random_bytes(rng));
    }
    const auto t = node_tree(hosts);
    std::vector<std::string> packed;  // what each leader sends: its node's strings in rank order
    for (const auto& members : t.members) {
      std::vector<std::string> node;
      for (int r : members) node.push_back(mine[static_cast<std::size_t>(r)]);
      packed.push_back(pack_strings(node));
    }
    EXPECT_EQ(assemble_gather(t, packed), mine);
  }
}

TEST(NodeTree, DamagedPackingIsRefused) {
  const std::string p = pack_strings({"alpha", "", "beta"});
  EXPECT_EQ(unpack_strings(p, 3), (std::vector<std::string>{"alpha", "", "beta"}));
  EXPECT_THROW(unpack_strings(p, 4), Error);                          // fewer parts than expected
  EXPECT_THROW(unpack_strings(p, 2), Error);                          // more parts than expected
  EXPECT_THROW(unpack_strings(p.substr(0, p.size() - 1), 3), Error);  // cut short
  EXPECT_THROW(assemble_gather(node_tree({"a", "b"}), {p}), Error);   // a node missing
}

}  // namespace
}  // namespace gpuscale
