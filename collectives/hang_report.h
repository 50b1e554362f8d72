#pragma once
// What a rank says when it gave up waiting for a collective: which peers never arrived. The rank that
// timed out tells every other member of the group, listens a short while for the same word from them,
// and names the members it never heard from (they never reached the operation, or hang inside it
// without noticing). The lowest rank that timed out reports; the others stay quiet, so the user reads
// one line. The MPI exchange is below; the decisions are pure functions, unit-tested.
#include <mpi.h>

#include <string>
#include <vector>

namespace gpuscale {

// The MPI tag of the exchange (one int: the sender's group rank).
inline constexpr int kHangTag = 0x6861;

struct GroupMember {
  int world_rank = 0;
  std::string host;
};

// The members of `comm` in its rank order, named by world rank and host (no communication:
// MPI_Group_translate_ranks). `world_hosts`: the host of every world rank.
std::vector<GroupMember> group_members(MPI_Comm comm, const std::vector<std::string>& world_hosts);

// Group ranks in [0, size) that are neither `self` nor in `heard_from`.
std::vector<int> missing_members(int size, int self, const std::vector<int>& heard_from);
// The rank that reports: the lowest of `self` and those heard from.
int reporting_member(int self, const std::vector<int>& heard_from);
// "all_reduce ... did not complete within 30 s: rank 3 (node-b) never arrived (seen from rank 0
// (node-a)); the communicator was aborted", or, when every member arrived, that the transport itself
// is stuck.
std::string hang_message(const std::string& what, double timeout_s, const std::vector<GroupMember>& members, int self,
                         const std::vector<int>& missing);

struct HangReport {
  std::string message;
  bool report = true;  // false: a lower rank reports the same event
};

// The exchange: tells the others (tag kHangTag on `comm`, which must be the transport's own
// communicator), listens `grace_s` seconds, and builds the message.
HangReport report_hang(MPI_Comm comm, const std::vector<GroupMember>& members, const std::string& what,
                       double timeout_s, double grace_s);

// How long to listen for the others: a fifth of the timeout, between 1 and 10 seconds.
double hang_grace_seconds(double timeout_s);

}  // namespace gpuscale
