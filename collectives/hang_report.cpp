#include "collectives/hang_report.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

namespace gpuscale {
namespace {

std::string member_text(const std::vector<GroupMember>& members, int r) {
  if (r < 0 || static_cast<std::size_t>(r) >= members.size()) return fmt::format("group rank {}", r);
  const auto& m = members[static_cast<std::size_t>(r)];
  return fmt::format("rank {} ({})", m.world_rank, m.host);
}

}  // namespace

std::vector<GroupMember> group_members(MPI_Comm comm, const std::vector<std::string>& world_hosts) {
  MPI_Group group, world;
  MPI_Comm_group(comm, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int size = 0;
  MPI_Group_size(group, &size);
  std::vector<int> mine(static_cast<std::size_t>(size)), theirs(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) mine[static_cast<std::size_t>(i)] = i;
  MPI_Group_translate_ranks(group, size, mine.data(), world, theirs.data());
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  std::vector<GroupMember> out;
  for (int w : theirs) {
    const bool known = w >= 0 && static_cast<std::size_t>(w) < world_hosts.size();
    out.push_back({w, known ? world_hosts[static_cast<std::size_t>(w)] : std::string("unknown host")});
  }
  return out;
}

std::vector<int> missing_members(int size, int self, const std::vector<int>& heard_from) {
  std::vector<int> out;
  for (int r = 0; r < size; ++r)
    if (r != self && std::find(heard_from.begin(), heard_from.end(), r) == heard_from.end()) out.push_back(r);
  return out;
}

int reporting_member(int self, const std::vector<int>& heard_from) {
  int lowest = self;
  for (int r : heard_from) lowest = std::min(lowest, r);
  return lowest;
}

std::string hang_message(const std::string& what, double timeout_s, const std::vector<GroupMember>& members, int self,
                         const std::vector<int>& missing) {
  const std::string head = fmt::format("{} did not complete within {:g} s", what, timeout_s);
  if (missing.empty())
    return fmt::format("{}: all {} ranks reached it and waited (seen from {}): the transport itself is stuck "
                       "(a network, NVLink or GPU fault?); the communicator was aborted",
                       head, members.size(), member_text(members, self));
  std::string names;
  const std::size_t shown = std::min<std::size_t>(missing.size(), 8);
  for (std::size_t i = 0; i < shown; ++i)
    names += (i == 0 ? "" : i + 1 == shown && shown == missing.size() ? " and " : ", ") +
             member_text(members, missing[i]);
  if (shown < missing.size()) names += fmt::format(" and {} more", missing.size() - shown);
  return fmt::format("{}: {} never arrived (seen from {}); the communicator was aborted", head, names,
                     member_text(members, self));
}

double hang_grace_seconds(double timeout_s) { return std::clamp(timeout_s / 5, 1.0, 10.0); }

HangReport report_hang(MPI_Comm comm, const std::vector<GroupMember>& members, const std::string& what,
                       double timeout_s, double grace_s) {
  int self = 0, size = 1;
  MPI_Comm_rank(comm, &self);
  MPI_Comm_size(comm, &size);
  // The sends may never be received (the peer is gone): their requests are released to complete on
  // their own, and the payload lives on (static) until they do.
  static int payload;
  payload = self;
  for (int r = 0; r < size; ++r) {
    if (r == self) continue;
    MPI_Request req;
    MPI_Isend(&payload, 1, MPI_INT, r, kHangTag, comm, &req);
    MPI_Request_free(&req);
  }
  std::vector<int> heard;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(grace_s);
  while (static_cast<int>(heard.size()) < size - 1 && std::chrono::steady_clock::now() < until) {
    int flag = 0;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, kHangTag, comm, &flag, &st);
    if (!flag) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    int who = -1;
    MPI_Recv(&who, 1, MPI_INT, st.MPI_SOURCE, kHangTag, comm, MPI_STATUS_IGNORE);
    if (std::find(heard.begin(), heard.end(), st.MPI_SOURCE) == heard.end()) heard.push_back(st.MPI_SOURCE);
  }
  return {hang_message(what, timeout_s, members, self, missing_members(size, self, heard)),
          reporting_member(self, heard) == self};
}

}  // namespace gpuscale
