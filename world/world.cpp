#include "world/world.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <thread>

#include <fmt/format.h>

#include "core/error.h"
#include "world/activity.h"
#include "world/patient_wait.h"
#include "world/test_hosts.h"

namespace gpuscale {
namespace {

void check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  throw Error(fmt::format("{} failed: {}", call, std::string(msg, static_cast<std::size_t>(len))), 1);
}

// MPI_Ibarrier, then MPI_Test with the pauses of patient_pause between polls (world/patient_wait.h).
void patient_barrier(MPI_Comm comm, const PatientWait& plan = {}) {
  MPI_Request req = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  for (int polls = 0;; polls = std::min(polls + 1, 64)) {  // past 64 polls every pause is the cap
    int done = 0;
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(patient_pause(plan, polls));
  }
}

std::string hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::vector<std::string> gatherv(MPI_Comm comm, const std::string& mine, bool all, int root_rank) {
  int size = 1, rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(static_cast<std::size_t>(size));
  if (all)
    check(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm), "MPI_Allgather");
  else
    check(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root_rank, comm), "MPI_Gather");
  std::vector<int> displs(static_cast<std::size_t>(size));
  long long total = 0;
  for (int i = 0; i < size; ++i) {
    displs[static_cast<std::size_t>(i)] = static_cast<int>(total);
    total += lens[static_cast<std::size_t>(i)];
  }
  const bool receives = all || rank == root_rank;
  if (receives && total > INT32_MAX) throw Error("gathered result data exceeds 2 GiB", 1);
  std::string buf(receives ? static_cast<std::size_t>(total) : 0, '\0');
  if (all)
    check(MPI_Allgatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), displs.data(), MPI_CHAR, comm),
          "MPI_Allgatherv");
  else
    check(MPI_Gatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), displs.data(), MPI_CHAR, root_rank, comm),
          "MPI_Gatherv");
  std::vector<std::string> out;
  if (!receives) return out;
  for (int i = 0; i < size; ++i)
    out.push_back(buf.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(i)]),
                             static_cast<std::size_t>(lens[static_cast<std::size_t>(i)])));
  return out;
}

}  // namespace

World::World(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    finalize_ = true;
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  MPI_Comm node;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
  hosts_ = gatherv(MPI_COMM_WORLD, hostname(), true, 0);
  for (const auto& s : gatherv(MPI_COMM_WORLD, std::to_string(local_rank_), true, 0)) local_ranks_.push_back(std::stoi(s));
  make_tree();
}

void World::act_as_hosts(std::vector<std::string> hosts) {
  if (hosts.size() != hosts_.size()) throw Error("internal: act_as_hosts needs one host per rank");
  local_ranks_ = local_ranks_of(hosts);
  hosts_ = std::move(hosts);
  free_tree();  // every rank acts as the same hosts (one variable for the job): the splits match
  make_tree();
}

void World::make_tree() {
  tree_ = node_tree(hosts_);
  const int node = tree_.node[static_cast<std::size_t>(rank_)];
  check(MPI_Comm_split(MPI_COMM_WORLD, node, rank_, &node_comm_), "MPI_Comm_split");
  MPI_Comm_set_errhandler(node_comm_, MPI_ERRORS_RETURN);
  check(MPI_Comm_split(MPI_COMM_WORLD, is_node_leader() ? 0 : MPI_UNDEFINED, rank_, &leader_comm_), "MPI_Comm_split");
  if (leader_comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(leader_comm_, MPI_ERRORS_RETURN);
}

void World::free_tree() {
  if (node_comm_ != MPI_COMM_NULL) MPI_Comm_free(&node_comm_);
  if (leader_comm_ != MPI_COMM_NULL) MPI_Comm_free(&leader_comm_);
}

World::~World() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) free_tree();
  if (finalize_) MPI_Finalize();
}

std::string World::library_version() const {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, static_cast<std::size_t>(len));
  // Open MPI appends build details after a comma or newline; keep the first line.
  if (auto cut = s.find_first_of(",\n"); cut != std::string::npos) s.resize(cut);
  return s;
}

void World::turn_barrier(bool soon) const {
  ActivityScope wait(Phase::waiting, "barrier of all ranks (waiting its turn)");
  const PatientWait plan;
  patient_barrier(MPI_COMM_WORLD, soon ? plan : PatientWait{plan.cap, plan.cap});
  note_progress();  // a turn ended: every group's work in it is done (the watchdog's progress)
}

std::vector<std::string> World::gather_to_root(const std::string& mine) const {
  ActivityScope wait(Phase::waiting, "gather to rank 0");
  const auto node = gatherv(node_comm_, mine, false, 0);  // the leader gets its node's, in rank order
  if (leader_comm_ == MPI_COMM_NULL) return {};
  const auto nodes = gatherv(leader_comm_, pack_strings(node), false, 0);
  if (rank_ != 0) return {};
  return assemble_gather(tree_, nodes);
}

std::string World::broadcast_from_node_leader(const std::string& text) const {
  ActivityScope wait(Phase::waiting, "broadcast from the node's leader");
  unsigned long long len = text.size();
  check(MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, node_comm_), "MPI_Bcast");
  std::string out = is_node_leader() ? text : std::string(len, '\0');
  if (len > INT32_MAX) throw Error("node broadcast exceeds 2 GiB", 1);
  if (len > 0) check(MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, node_comm_), "MPI_Bcast");
  return out;
}

std::vector<std::string> World::allgather(const std::string& mine) const {
  ActivityScope wait(Phase::waiting, "allgather of all ranks");
  return gatherv(MPI_COMM_WORLD, mine, true, 0);
}

std::string World::broadcast_from_root(const std::string& text) const {
  ActivityScope wait(Phase::waiting, "broadcast from rank 0");
  unsigned long long len = text.size();
  check(MPI_Bcast(&len, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = rank_ == 0 ? text : std::string(len, '\0');
  if (len > 0) check(MPI_Bcast(out.data(), static_cast<int>(len), MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}

bool World::any(bool mine) const {
  ActivityScope wait(Phase::waiting, "agreement of all ranks");
  int v = mine ? 1 : 0, out = 0;
  check(MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD), "MPI_Allreduce");
  return out != 0;
}

int World::max(int mine) const {
  ActivityScope wait(Phase::waiting, "agreement of all ranks");
  int out = 0;
  check(MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out;
}

void World::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; if it did, the process still ends
}

Group::Group(const World& world, bool member, int key) {
  check(MPI_Comm_split(world.comm(), member ? 0 : MPI_UNDEFINED, key, &comm_), "MPI_Comm_split");
  if (comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

Group::Group(const World& world, int colour, int key) {
  check(MPI_Comm_split(world.comm(), colour < 0 ? MPI_UNDEFINED : colour, key, &comm_), "MPI_Comm_split");
  if (comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

Group::Group(const Group& parent, int colour, int key) {
  ActivityScope wait(Phase::waiting, "splitting the GPU count's ranks");
  check(MPI_Comm_split(parent.comm(), colour < 0 ? MPI_UNDEFINED : colour, key, &comm_), "MPI_Comm_split");
  if (comm_ != MPI_COMM_NULL) MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
}

Group::~Group() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

int Group::rank() const {
  int r = -1;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_rank(comm_, &r);
  return r;
}

int Group::size() const {
  int s = 0;
  if (comm_ != MPI_COMM_NULL) MPI_Comm_size(comm_, &s);
  return s;
}

void Group::barrier() const {
  ActivityScope wait(Phase::waiting, "barrier of the GPU count's ranks");
  check(MPI_Barrier(comm_), "MPI_Barrier");
}

void Group::turn_barrier() const {
  ActivityScope wait(Phase::waiting, "barrier of the GPU count's ranks (waiting its turn)");
  patient_barrier(comm_);
  note_progress();  // as World::turn_barrier
}

std::vector<double> Group::allgather(double mine) const {
  ActivityScope wait(Phase::waiting, "allgather of the GPU count's ranks");
  std::vector<double> out(static_cast<std::size_t>(size()));
  check(MPI_Allgather(&mine, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, comm_), "MPI_Allgather");
  return out;
}

std::vector<double> Group::allgather(const std::vector<double>& mine) const {
  ActivityScope wait(Phase::waiting, "allgather of the GPU count's ranks");
  const auto n = mine.size();
  if (n > static_cast<std::size_t>(INT32_MAX) / static_cast<std::size_t>(std::max(1, size())))
    throw Error("allgather: too many values", 1);
  std::vector<double> out(n * static_cast<std::size_t>(size()));
  check(MPI_Allgather(mine.data(), static_cast<int>(n), MPI_DOUBLE, out.data(), static_cast<int>(n), MPI_DOUBLE, comm_),
        "MPI_Allgather");
  return out;
}

Group::MaxLoc Group::max_each(const std::vector<double>& mine) const {
  ActivityScope wait(Phase::waiting, "per-iteration maximum of the GPU count's ranks");
  if (mine.size() > static_cast<std::size_t>(INT32_MAX)) throw Error("max_each: too many values", 1);
  struct DoubleInt {  // MPI_DOUBLE_INT's layout
    double value;
    int rank;
  };
  const int me = world_rank();
  std::vector<DoubleInt> in(mine.size()), out(mine.size());
  for (std::size_t i = 0; i < mine.size(); ++i) in[i] = {mine[i], me};
  check(MPI_Allreduce(in.data(), out.data(), static_cast<int>(in.size()), MPI_DOUBLE_INT, MPI_MAXLOC, comm_),
        "MPI_Allreduce");
  MaxLoc m;
  for (const auto& e : out) {
    m.value.push_back(e.value);
    m.world_rank.push_back(e.rank);
  }
  return m;
}

int Group::world_rank() const {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

int Group::first_failed(bool failed) const {
  ActivityScope wait(Phase::waiting, "setup agreement of the GPU count's ranks");
  const int none = std::numeric_limits<int>::max();
  int mine = failed ? world_rank() : none, out = none;
  check(MPI_Allreduce(&mine, &out, 1, MPI_INT, MPI_MIN, comm_), "MPI_Allreduce");
  return out == none ? -1 : out;
}

}  // namespace gpuscale
