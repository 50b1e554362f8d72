// Streams on simulated clocks, the host thread's clock, graphs and sticky errors (emu_core.h).
#include <algorithm>
#include <atomic>

#include "tests/emulated_gpu/core/faults.h"
#include "tests/emulated_gpu/core/node_state.h"

namespace gpuscale_emu {
namespace {

// cudaErrorIllegalAddress (/usr/local/cuda/include/driver_types.h: "cudaErrorIllegalAddress = 700";
// "the context cannot be used, so it must be destroyed"): a planted sticky fault's error.
constexpr int kIllegalAddress = 700;

thread_local double t_host_clock = 0;
std::atomic<int> g_sticky{0};

// Counts a kernel launch on `d` (caller holds the lock); true when the planted sticky fault fires now.
bool launch_faults(Device& d, const Operation& op) {
  if (!op.launch) return false;
  ++d.launches;
  if (d.sticky_after_launches > 0 && d.launches == d.sticky_after_launches) {
    int none = 0;
    g_sticky.compare_exchange_strong(none, kIllegalAddress);
    return true;
  }
  return false;
}

}  // namespace

double effective_duration_us(const Device& d, double duration_us, Operation::Kind kind) {
  double f = d.slow_factor * d.noise_factor * run_noise() * next_rep_noise();
  if (kind == Operation::Kind::memory) f *= d.hbm_slow_factor;
  return duration_us * f;
}

Stream* stream_of(void* handle) {
  // cudaStreamLegacy ((cudaStream_t)0x1) and cudaStreamPerThread ((cudaStream_t)0x2)
  // (/usr/local/cuda/include/driver_types.h) name the current device's default stream, as 0 does.
  const auto h = reinterpret_cast<std::uintptr_t>(handle);
  if (h == 0 || h == 1 || h == 2) return node().legacy.at(static_cast<std::size_t>(current_device())).get();
  return static_cast<Stream*>(handle);
}

Stream* new_stream(int device) {
  NodeState& n = node();
  auto* s = new Stream;
  s->device = device;
  std::lock_guard<std::mutex> lock(n.mu);
  n.streams.push_back(s);
  return s;
}

void delete_stream(Stream* s) {
  NodeState& n = node();
  {
    std::lock_guard<std::mutex> lock(n.mu);
    for (const auto& l : n.legacy)
      if (l.get() == s) return;  // the legacy streams live as long as the process
    n.streams.erase(std::remove(n.streams.begin(), n.streams.end(), s), n.streams.end());
  }
  delete s;
}

double enqueue(Stream* s, Operation op) {
  NodeState& n = node();
  std::unique_lock<std::mutex> lock(n.mu);
  if (s->capture) {  // cudaStreamBeginCapture: "work is not enqueued for execution" but recorded
    s->capture->ops.push_back(std::move(op));
    return s->clock_us;
  }
  Device& d = n.devices.at(static_cast<std::size_t>(s->device));
  t_host_clock += d.model.launch_overhead_us;
  const double start = std::max(s->clock_us, t_host_clock);
  const bool faulted = launch_faults(d, op);
  note_operation_writes(op);
  if (op.finish) {  // decided when it runs (a collective may wait for other processes): no lock held
    lock.unlock();
    const double end = op.finish(start);
    lock.lock();
    s->clock_us = std::max(s->clock_us, end);
    return start;
  }
  s->clock_us = start + effective_duration_us(d, op.duration_us, op.kind);
  const bool run = op.work && !faulted && g_sticky.load() == 0;
  lock.unlock();
  if (run) op.work();
  return start;
}

double enqueue_timed(Stream* s, const std::string& what, const std::function<double(double start_us)>& finish,
                     std::optional<std::vector<WriteRange>> writes) {
  Operation op;
  op.what = what;
  op.kind = Operation::Kind::communication;
  op.finish = finish;
  op.writes = std::move(writes);
  return enqueue(s, std::move(op));
}

double host_clock_us() { return t_host_clock; }

void wait_for(double clock_us) { t_host_clock = std::max(t_host_clock, clock_us); }

double device_clock_us(int ordinal) {
  NodeState& n = node();
  std::lock_guard<std::mutex> lock(n.mu);
  double t = 0;
  for (const Stream* s : n.streams)
    if (s->device == ordinal) t = std::max(t, s->clock_us);
  return t;
}

// A graph launch is one launch for the host (CUDA Programming Guide, "CUDA Graphs": a graph is
// "defined once and then launched repeatedly", its work submitted as a unit): one launch overhead,
// then the nodes back to back in capture order. Each kernel in it is still a launch on the device.
void launch_graph(const Graph& g, Stream* s) {
  NodeState& n = node();
  std::unique_lock<std::mutex> lock(n.mu);
  if (s->capture) {  // launching a graph into a capture records its nodes
    for (const auto& op : g.ops) s->capture->ops.push_back(op);
    return;
  }
  Device& d = n.devices.at(static_cast<std::size_t>(s->device));
  t_host_clock += d.model.launch_overhead_us;
  double t = std::max(s->clock_us, t_host_clock);
  ++g.launches;
  for (const auto& op : g.ops) {
    const bool faulted = launch_faults(d, op);
    note_operation_writes(op);
    if (op.finish) {
      lock.unlock();
      t = std::max(t, op.finish(t));
      lock.lock();
      continue;
    }
    t += effective_duration_us(d, op.duration_us, op.kind);
    const bool run = op.work && !faulted && g_sticky.load() == 0;  // a repeatable product's own cache skips it
    if (run) {
      lock.unlock();
      op.work();
      lock.lock();
    }
  }
  s->clock_us = t;
}

int sticky_error() { return g_sticky.load(); }

void set_sticky_error(int cuda_error) {
  int none = 0;
  g_sticky.compare_exchange_strong(none, cuda_error);  // the first sticky error stays
}

}  // namespace gpuscale_emu
