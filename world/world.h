#pragma once
// The MPI seam of the harness: the world of ranks, where each one runs, and the few control-plane
// operations the runner needs (a turn barrier, gather to rank 0, broadcast, sub-groups per GPU count).
// Everything above this file decides with plain data (harness/plan/plan.h), so it is unit-tested without MPI.
#include <mpi.h>

#include <string>
#include <vector>

#include "world/node_tree.h"

namespace gpuscale {

class World {
 public:
  // Initialises MPI (also when started without mpirun: a world of one).
  World(int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }  // from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
  int local_size() const { return local_size_; }
  const std::string& host() const { return hosts_[static_cast<std::size_t>(rank_)]; }
  const std::vector<std::string>& hosts() const { return hosts_; }  // host of every world rank
  const std::vector<int>& local_ranks() const { return local_ranks_; }  // local rank of every world rank
  MPI_Comm comm() const { return MPI_COMM_WORLD; }
  // The ranks by host, each node led by its lowest rank (world/node_tree.h; follows act_as_hosts).
  const NodeTree& tree() const { return tree_; }
  int node_leader() const { return tree_.leader[static_cast<std::size_t>(rank_)]; }
  bool is_node_leader() const { return node_leader() == rank_; }
  // Test-only (GPUSCALE_TEST_HOSTS, world/test_hosts.h): from here on the ranks act as nodes of these
  // names (one per rank) in host(), hosts() and local_ranks(), so placement, tiling and every host
  // field see them. local_rank() and local_size() stay the real ones: they bind devices and threads.
  void act_as_hosts(std::vector<std::string> hosts);
  std::string library_version() const;

  // A barrier whose waiting ranks sleep between polls (world/patient_wait.h) instead of spinning, so
  // they leave the cores to the ranks still working: for turns that hand the machine from one group
  // to the next (sequential tiling). Up to 2 ms later than MPI_Barrier; never inside a timed region.
  // `soon`: this rank works in the turn after it, so it polls from the first, short pause. A rank
  // whose turn is further off passes false and polls at the cap from the start: it may enter the next
  // barrier one cap late, while that turn works, but its wake-ups stay out of the turn's first
  // milliseconds (interleaved repetitions hand over every few milliseconds: harness/run/repetition_turns.h).
  void turn_barrier(bool soon = true) const;
  // Every rank contributes a string; rank 0 receives all of them in rank order (others get {}). Two
  // levels: a node's ranks to their leader, then the leaders to rank 0 (rank 0's fan-in is O(nodes)).
  std::vector<std::string> gather_to_root(const std::string& mine) const;
  // The node leader's text to every rank of its node (what the leader passes is what they get).
  std::string broadcast_from_node_leader(const std::string& text) const;
  std::vector<std::string> allgather(const std::string& mine) const;
  std::string broadcast_from_root(const std::string& text) const;
  // Logical OR / max over all ranks.
  bool any(bool mine) const;
  int max(int mine) const;
  // Ends every rank of the job now (MPI_Abort): for a failure no collective can recover from.
  [[noreturn]] void abort(int code) const;

 private:
  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  std::vector<std::string> hosts_;
  std::vector<int> local_ranks_;
  bool finalize_ = false;
  // The tree of hosts_ and its communicators: this rank's node (leader first), and the leaders
  // (MPI_COMM_NULL on other ranks; rank 0 first).
  void make_tree();
  void free_tree();
  NodeTree tree_;
  MPI_Comm node_comm_ = MPI_COMM_NULL, leader_comm_ = MPI_COMM_NULL;
};

// The ranks that measure at one GPU count. Ranks outside it hold MPI_COMM_NULL.
class Group {
 public:
  Group(const World& world, bool member, int key);
  // One of several disjoint groups of the world (a tiled GPU count, harness/plan/tiling.h): the ranks that
  // give the same colour form one group, ordered by key; a negative colour joins none. Every world rank
  // calls it.
  Group(const World& world, int colour, int key);
  // The same within a group (the fleet benchmarks' node pairs): every member of `parent` calls it.
  Group(const Group& parent, int colour, int key);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  bool member() const { return comm_ != MPI_COMM_NULL; }
  MPI_Comm comm() const { return comm_; }
  int rank() const;
  int size() const;
  void barrier() const;
  void turn_barrier() const;  // World::turn_barrier over the members (the node pairs' turns)
  // Every member gets every member's value, in group rank order.
  std::vector<double> allgather(double mine) const;
  // Every member gives `mine` (the same length on every member); every member gets them all, member
  // after member in group rank order.
  std::vector<double> allgather(const std::vector<double>& mine) const;
  // Element by element over the members' `mine` (the same length on every member): the largest value
  // and the world rank that gave it (MPI_MAXLOC, one MPI_Allreduce of 12 bytes per element: nothing
  // gathers to one rank; ties go to the lower world rank). Every member gets both.
  struct MaxLoc {
    std::vector<double> value;
    std::vector<int> world_rank;
  };
  MaxLoc max_each(const std::vector<double>& mine) const;
  // One MPI_Allreduce over the group: the lowest world rank of the members that say `failed`, or -1
  // when none does (a point's setup is agreed with it before the first timed operation).
  int first_failed(bool failed) const;
  int world_rank() const;  // this member's rank in the world

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
};

}  // namespace gpuscale
