// TEST STAND-IN for the emulated GPU node's core (tests/emulated_gpu/core/emu_core.h), built only while
// the real core (gpuscale_emu_core, written by another part) is not in the tree. It implements just the
// functions the emulated NCCL and its tests call, by the interface's documented rules: four devices of
// a stated h100-sxm-like model, memory counted against capacity, a stream clock per stream where work
// starts at max(stream clock, host clock). It is not the core and models nothing more.
#include <map>
#include <stdexcept>

#include "tests/emulated_gpu/core/emu_core.h"

namespace gpuscale_emu {
namespace {

GpuModel stand_in_model() {
  GpuModel m;
  m.key = "h100-sxm";
  m.name = "NVIDIA H100 80GB HBM3 (test stand-in)";
  m.memory_bytes = 80ULL * 1000 * 1000 * 1000;
  m.hbm_gbps = 3350;
  m.nvlink_gbps = 450;
  m.pcie_gbps = 64;
  m.nic_gbps = 50;
  return m;
}

struct Node {
  std::vector<Device> devices;
  std::vector<Stream> legacy;
  Node() {
    for (int i = 0; i < 4; ++i) {
      Device d;
      d.ordinal = i;
      d.model = stand_in_model();
      d.name = d.model.name;
      d.memory_total = d.model.memory_bytes;
      devices.push_back(d);
      Stream s;
      s.device = i;
      legacy.push_back(s);
    }
  }
};
Node& node() {
  static Node n;
  return n;
}
thread_local int current = 0;
double host_clock = 0;

}  // namespace

const GpuModel& gpu_model(const std::string& key) {
  static const GpuModel m = stand_in_model();
  if (key != m.key) throw std::invalid_argument("test stand-in: only h100-sxm");
  return m;
}

int device_count() { return static_cast<int>(node().devices.size()); }
Device& device(int ordinal) { return node().devices.at(static_cast<std::size_t>(ordinal)); }
int current_device() { return current; }
void set_current_device(int ordinal) { current = ordinal; }

bool charge(int ordinal, std::uint64_t bytes) {
  Device& d = device(ordinal);
  if (d.memory_held + bytes > d.memory_total) return false;
  d.memory_held += bytes;
  return true;
}
void release(int ordinal, std::uint64_t bytes) { device(ordinal).memory_held -= bytes; }

Stream* stream_of(void* handle) {
  return handle ? static_cast<Stream*>(handle) : &node().legacy.at(static_cast<std::size_t>(current));
}
Stream* new_stream(int dev) {
  auto* s = new Stream;
  s->device = dev;
  return s;
}
void delete_stream(Stream* s) { delete s; }

double enqueue(Stream* s, Operation op) {
  const double start = std::max(s->clock_us, host_clock);
  if (op.work) op.work();
  s->clock_us = start + op.duration_us * device(s->device).slow_factor;
  return start;
}

double enqueue_timed(Stream* s, const std::string&, const std::function<double(double)>& finish) {
  const double start = std::max(s->clock_us, host_clock);
  s->clock_us = finish(start);
  return start;
}

double host_clock_us() { return host_clock; }
void wait_for(double clock_us) { host_clock = std::max(host_clock, clock_us); }

}  // namespace gpuscale_emu
