#pragma once
// Where a collective's group runs, as one member sees it: whether it spans another host, and which of
// its members share this member's host (by local index). A timing fault planted on a NIC or an
// intra-node link acts only on the traffic that crosses it (core/fault_plan.h).
#include <string>
#include <vector>

#include "core/fault_plan.h"
#include "world/world.h"

namespace gpuscale {

// Pure: `members` the group's world ranks, `hosts` the host of every world rank, `me` a member.
WorkPlace work_place_of(const std::vector<int>& members, const std::vector<std::string>& hosts, int me);

// The same for `group` (one allgather of the members' world ranks; every member calls it). Without
// the hosts (nullptr): a group of this host only.
WorkPlace comm_work_place(const Group& group, const std::vector<std::string>* hosts);

}  // namespace gpuscale
