#pragma once
// The two-level shape of the world that bounds rank 0's fan-in at scale: the ranks grouped by the host
// they run on (or act as, world/test_hosts.h), each node led by its lowest rank. A gather to rank 0
// goes node -> leader -> rank 0 and the sentinel (harness/guard/sentinel.h) links a node's ranks to
// their leader and the leaders to rank 0, so rank 0 talks to O(nodes) peers, not O(ranks). Pure data
// (no MPI), unit-tested directly; World (world.h) builds the communicators from it.
#include <string>
#include <string_view>
#include <vector>

namespace gpuscale {

struct NodeTree {
  std::vector<int> leader;                // the leader (lowest world rank of its host) of every rank
  std::vector<int> node;                  // the node index of every rank
  std::vector<std::vector<int>> members;  // every node's ranks, ascending; nodes ordered by their leader
};

// The tree of the hosts of every world rank (in rank order). Rank 0 always leads node 0.
NodeTree node_tree(const std::vector<std::string>& hosts);

// The strings of one node as one string for the second level of a gather: each one's length, then
// its bytes. unpack_strings takes it back apart; it throws gpuscale::Error when the text is not `count`
// packed strings (a truncated or foreign message).
std::string pack_strings(const std::vector<std::string>& parts);
std::vector<std::string> unpack_strings(std::string_view packed, std::size_t count);

// Rank 0's result of a two-level gather: every node's packed strings (in node order) back in world-rank
// order.
std::vector<std::string> assemble_gather(const NodeTree& tree, const std::vector<std::string>& packed_nodes);

}  // namespace gpuscale
