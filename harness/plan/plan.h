#pragma once
// The GPU-count plan: which ranks measure at each GPU count. Pure functions of where the ranks run,
// so every launch shape (N = 1..many ranks over any number of nodes, any rank-to-node mapping) is
// unit-tested without MPI.
#include <cstddef>
#include <optional>
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

// When the communicators of every GPU count can go. The plan runs point by point, each at every GPU
// count, so every collective point needs every count's communicator again: they are all freed after
// the last point still to measure that uses one (`collective[i]`: point i runs on a communicator;
// `kept[i]`: a resumed file holds it, so it is not measured). nullopt: no point to measure needs one.
std::optional<std::size_t> last_communicator_point(const std::vector<bool>& collective, const std::vector<bool>& kept);

// Each GPU count's communicator lives from its first row that needs one to its last (issue 46, finding
// 5: kept alive to the end, every count's NCCL communicator held its own device memory).
// `needs[p][c]`: point p's row at the c-th GPU count runs on a communicator (a collective-scope point,
// measured at that count, not kept from a resumed file). Rows that are not rectangular count as false.
// The point after whose row the c-th count's communicator is freed, per count (nullopt: none needs one).
std::vector<std::optional<std::size_t>> last_communicator_rows(const std::vector<std::vector<bool>>& needs,
                                                               std::size_t counts);
// How many GPU counts' communicators may be alive while point p is measured, per point: those whose
// first row that needs one is at or before p and whose last is at or after it. A rank is in at most one
// group per count, so this bounds the count communicators a rank holds then.
std::vector<int> count_communicators_alive(const std::vector<std::vector<bool>>& needs, std::size_t counts);

}  // namespace gpuscale
