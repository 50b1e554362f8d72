#pragma once
// The GPU-count plan: which ranks measure at each GPU count. Pure functions of where the ranks run,
// so every launch shape (N = 1..many ranks over any number of nodes, any rank-to-node mapping) is
// unit-tested without MPI.
#include <string>
#include <vector>

namespace gpuscale {

struct Topology {
  int nodes = 1;
  std::vector<int> node_of_rank;  // node index of every world rank (nodes numbered by first appearance)
  std::vector<int> packed_order;  // world ranks node by node, then by local rank: the order GPU counts fill
};

// hosts[r] and local_ranks[r] for every world rank r.
Topology make_topology(const std::vector<std::string>& hosts, const std::vector<int>& local_ranks);

// {1, 2, 4, ..., largest power of two <= n} plus n itself.
std::vector<int> gpu_counts(int n);

// The world ranks that measure at GPU count k: the first k of the packed order, so k fills one node
// before spreading to the next (k = GPUs per node measures one whole node).
std::vector<int> participants(const Topology& t, int k);
int nodes_spanned(const Topology& t, int k);
// "single" (k = 1), "intra-node" (one node) or "inter-node".
std::string topology_label(const Topology& t, int k);

}  // namespace gpuscale
