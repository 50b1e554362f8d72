// TEST STAND-IN for the emulated node's core: see core_stand_in.h.
#include "tests/emulated_gpu/cublaslt/tests/core_stand_in.h"

namespace {
gpuscale_emu::Device g_device;
gpuscale_emu::Stream g_stream;
std::vector<stand_in::Recorded> g_ops;
int g_sticky = 0;
}  // namespace

namespace stand_in {

void reset() {
  g_device = {};
  g_device.name = "stand-in H100";
  g_device.model.key = "stand-in";
  g_device.model.cc_major = 9;
  g_device.model.cc_minor = 0;
  g_device.model.sm_count = 132;
  g_device.model.tflops = {{"bf16", kBf16Tflops}, {"fp32", kFp32Tflops}};
  g_device.model.gemm_efficiency = kGemmEfficiency;
  g_stream = {};
  g_ops.clear();
  g_sticky = 0;
}

void set_compute_capability(int major, int minor) {
  g_device.model.cc_major = major;
  g_device.model.cc_minor = minor;
}

void set_sticky_error(int e) { g_sticky = e; }

const std::vector<Recorded>& operations() { return g_ops; }

}  // namespace stand_in

namespace gpuscale_emu {

int device_count() { return 1; }
Device& device(int) { return g_device; }
int current_device() { return 0; }
Stream* stream_of(void*) { return &g_stream; }
int sticky_error() { return g_sticky; }

double enqueue(Stream* s, Operation op) {
  g_ops.push_back({op.what, op.duration_us, op.repeatable_result});
  note_operation_writes(op);  // the core's own rules (core/write_log.cpp)
  if (op.work) op.work();
  const double start = s->clock_us;
  s->clock_us += op.duration_us;
  return start;
}

}  // namespace gpuscale_emu

namespace gpuscale_emu {

// The stand-in process stands for no test host (core/faults.h): a HOST/ID target never applies here.
bool target_here(const std::string& target, std::string& id) {
  if (target.find('/') != std::string::npos) return false;
  id = target;
  return true;
}

}  // namespace gpuscale_emu
