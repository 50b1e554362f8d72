#include "harness/benchmarks/work_place.h"

#include <cstddef>

#include "world/test_hosts.h"

namespace gpuscale {

WorkPlace work_place_of(const std::vector<int>& members, const std::vector<std::string>& hosts, int me) {
  WorkPlace w;
  const auto local = local_ranks_of(hosts);
  const auto& mine = hosts.at(static_cast<std::size_t>(me));
  for (const int r : members) {
    const auto i = static_cast<std::size_t>(r);
    if (hosts.at(i) != mine)
      w.leaves_host = true;
    else
      w.local_peers.push_back(local[i]);
  }
  return w;
}

WorkPlace comm_work_place(const Group& group, const std::vector<std::string>* hosts) {
  const auto ranks = group.allgather(static_cast<double>(group.world_rank()));
  if (hosts == nullptr) return {};
  std::vector<int> members;
  members.reserve(ranks.size());
  for (const double r : ranks) members.push_back(static_cast<int>(r));
  return work_place_of(members, *hosts, group.world_rank());
}

}  // namespace gpuscale
