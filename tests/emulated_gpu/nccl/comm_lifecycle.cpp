// The emulated communicator's life (tests only): attaching to its segment, charging its device memory,
// driving progress under the wait bound, detaching.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/nccl/emu_comm.h"
#include "tests/emulated_gpu/nccl/emu_environment.h"

namespace emu_nccl {
namespace {

// Device memory a communicator holds. NVIDIA/nccl issues 864 and 986: one communicator takes about
// 1.6 GB of GPU memory (buffers per channel and peer) unless it shares its parent's resources
// (ncclCommSplit with config.splitShare = 1: "Communicator Creation and Management", ncclCommSplit),
// which then costs little: kSharedCommBytes is this emulation's stated figure for that.
constexpr std::uint64_t kCommBytes = 1600ULL * 1000 * 1000;
constexpr std::uint64_t kSharedCommBytes = 16ULL << 20;

thread_local std::string last_error_text;

bool bound_passed(const ncclComm* c) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - c->last_progress).count() > wait_bound_s();
}

}  // namespace

const std::string& thread_last_error() { return last_error_text; }

ncclResult_t fail(ncclComm* c, ncclResult_t rc, const std::string& why) {
  last_error_text = "emulated NCCL: " + why;
  if (c != nullptr && c->async_error == ncclSuccess) {
    c->async_error = rc;
    c->last_error = last_error_text;
  }
  return rc;
}

ncclResult_t attach(ncclComm* c, const std::string& name, int nranks, int rank, bool blocking, bool split_share) {
  c->shm_name = name;
  c->nranks = nranks;
  c->rank = rank;
  c->blocking = blocking;
  c->device = gpuscale_emu::current_device();
  c->last_progress = std::chrono::steady_clock::now();
  const std::uint64_t bytes = split_share ? kSharedCommBytes : kCommBytes;
  if (!gpuscale_emu::charge(c->device, bytes)) {
    // A real init that cannot allocate its buffers fails with ncclSystemError, logging
    // "Cuda failure 'out of memory'" (NVIDIA/nccl issue 986).
    return fail(nullptr, ncclSystemError,
                "cuda memory allocation failed: the communicator's " + std::to_string(bytes) + " bytes do not fit on GPU " +
                    std::to_string(c->device));
  }
  c->charged = bytes;
  c->layout = layout_for(nranks);
  const int fd = shm_open(name.c_str(), O_CREAT | O_RDWR, 0600);
  // Every rank sizes the segment to the same length: ftruncate to the current size changes nothing, so
  // the order in which ranks arrive does not matter.
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(c->layout.total)) != 0) {
    if (fd >= 0) close(fd);
    return fail(nullptr, ncclSystemError, "shm_open/ftruncate of " + name + ": " + std::strerror(errno));
  }
  c->base = mmap(nullptr, c->layout.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (c->base == MAP_FAILED) {
    c->base = nullptr;
    return fail(nullptr, ncclSystemError, "mmap of " + name + ": " + std::strerror(errno));
  }
  RankSlot* me = slot(c->base, c->layout, rank);
  me->device = c->device;
  std::strncpy(me->host, this_host().c_str(), kHostNameBytes - 1);
  if (me->present.exchange(1) != 0) return fail(nullptr, ncclInvalidUsage, "rank " + std::to_string(rank) + " joined twice");
  if (header(c->base)->joined.fetch_add(1) + 1 == nranks) shm_unlink(name.c_str());  // all mapped: no name needed
  return ncclSuccess;
}

ncclResult_t progress(ncclComm* c) {
  if (c->abort_requested.load()) return fail(c, ncclInvalidUsage, "the communicator is being aborted");
  if (c->async_error != ncclSuccess) return c->async_error;
  const bool peer_aborted = c->base != nullptr && header(c->base)->aborted.load() != 0;
  if (!c->joined) {
    if (header(c->base)->joined.load() < c->nranks) {
      if (peer_aborted) return fail(c, ncclRemoteError, "a peer aborted the communicator during init");
      if (bound_passed(c)) {
        shm_unlink(c->shm_name.c_str());
        return fail(c, ncclSystemError, "not every rank joined the communicator within the emulation's wait bound");
      }
      return ncclInProgress;
    }
    for (int r = 0; r < c->nranks; ++r) {
      const RankSlot* s = slot(c->base, c->layout, r);
      c->hosts.emplace_back(s->host);
      c->devices.push_back(s->device);
    }
    c->joined = true;
    c->last_progress = std::chrono::steady_clock::now();
  }
  while (!c->pending.empty()) {
    const auto state = c->pending.front()->step();
    if (c->async_error != ncclSuccess) return c->async_error;  // the exchange itself failed
    if (state == Exchange::State::done) {
      c->pending.erase(c->pending.begin());
      c->last_progress = std::chrono::steady_clock::now();
      continue;
    }
    if (state == Exchange::State::progressed) {
      c->last_progress = std::chrono::steady_clock::now();
      return ncclInProgress;
    }
    // A rank that aborts ends the communicator for everyone waiting on it (nccl.h, ncclRemoteError:
    // "A call failed possibly due to a network error or a remote process exiting prematurely").
    if (peer_aborted) return fail(c, ncclRemoteError, "a peer aborted the communicator while this rank waited for it");
    if (bound_passed(c))
      return fail(c, ncclSystemError,
                  "an operation waited past the emulation's bound for a peer that never arrived (a real NCCL waits forever)");
    return ncclInProgress;
  }
  return ncclSuccess;
}

ncclResult_t progress_until_done(ncclComm* c) {
  c->in_call.fetch_add(1);
  ncclResult_t rc;
  while ((rc = progress(c)) == ncclInProgress) std::this_thread::sleep_for(std::chrono::microseconds(50));
  c->in_call.fetch_sub(1);
  return rc;
}

void detach(ncclComm* c, bool abort) {
  c->pending.clear();
  if (c->base != nullptr) {
    if (abort) header(c->base)->aborted.store(1);
    if (!c->joined) shm_unlink(c->shm_name.c_str());  // a name nobody will complete
    munmap(c->base, c->layout.total);
    c->base = nullptr;
  }
  if (c->charged > 0) gpuscale_emu::release(c->device, c->charged);
  c->charged = 0;
}

}  // namespace emu_nccl
