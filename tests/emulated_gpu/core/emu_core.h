#pragma once
// The emulated GPU node's shared state (tests only; docs/cuda.md, "The emulated GPU node"). The
// emulated libcudart.so.13, libcublasLt.so.13 and libnccl.so.2 (tests/emulated_gpu/) each link this one
// library, libgpuscale-emulated-gpu.so, so a stream, an allocation or a device is the same object to
// all three, as the real libraries share the driver's.
//
// What it models:
// - The node: the GPUs of GPUSCALE_FAKE_NVML_SCENARIO (the fake NVML's scenario, so both report the
//   same GPUs: count, name, memory, bus id, UUID, MIG instances), each of the model GPUSCALE_EMU_GPU
//   names (gpu_model.h: h100-sxm (default), h200, h100-pcie), filtered and renumbered by
//   CUDA_VISIBLE_DEVICES as the CUDA runtime does (CUDA C Programming Guide, "CUDA Environment
//   Variables").
// - Device memory: host memory, counted against the GPU's capacity.
// - Time: every stream has a simulated clock in microseconds. Work executes on the host at once, in
//   the order it is enqueued (a legal schedule of CUDA's stream semantics: operations in one stream run
//   in issue order; across streams only events order them), and advances its stream's clock by what
//   the model says it lasts. The host thread has a simulated clock too: each enqueue costs it the
//   launch overhead, and a synchronise sets it to the clock it waited for. Work starts at
//   max(stream clock, host clock).
//
// Every rule the emulation enforces cites NVIDIA's documentation (header line or guide section) where
// it is implemented.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/emulated_gpu/core/gpu_model.h"

namespace gpuscale_emu {

// One emulated GPU (or MIG instance, which CUDA shows as a device of its own).
struct Device {
  int ordinal = 0;         // after CUDA_VISIBLE_DEVICES
  std::string name;        // as the fake NVML reports it
  std::string uuid;        // "GPU-..." or "MIG-..."
  std::string pci_bus_id;  // "00000000:18:00.0"
  GpuModel model;          // its peaks and efficiencies (a MIG slice: scaled to its SMs and memory)
  std::uint64_t memory_total = 0;
  std::uint64_t memory_held = 0;  // by cudaMalloc, cuBLASLt workspaces, NCCL communicators
  double slow_factor = 1;         // planted (faults.h): every duration on this device is multiplied by it
  // Added:
  bool is_mig = false;            // a MIG instance (no peer access: MIG user guide, "P2P not supported")
  double hbm_slow_factor = 1;     // planted slow-hbm: memory-kind durations only
  long sticky_after_launches = 0; // planted sticky: the N-th kernel launch sets cudaErrorIllegalAddress
  long launches = 0;              // kernel launches so far (Operation::launch)
  double noise_factor = 1;        // GPUSCALE_EMU_NOISE's per-GPU factor (faults.h)
};

int device_count();
// The CUDA version the node's driver supports (cudaDriverGetVersion), the scenario's
// "cuda_driver_version" as the fake NVML reports it.
int driver_cuda_version();
Device& device(int ordinal);  // 0 <= ordinal < device_count()

// The host thread's current device (cudaSetDevice; CUDA Runtime API, "Device Management": the current
// device is per host thread, 0 until set).
int current_device();
void set_current_device(int ordinal);

// Memory charged to a device. false (nothing charged) past its capacity.
bool charge(int ordinal, std::uint64_t bytes);
void release(int ordinal, std::uint64_t bytes);

// A stream. The legacy default stream (handle 0) of each device is a Stream too.
struct Stream {
  int device = 0;
  double clock_us = 0;       // when its last operation ends
  struct Graph* capture = nullptr;  // non-null while capturing (cudaStreamBeginCapture)
};
// The Stream behind a cudaStream_t (nullptr: the current device's legacy stream).
Stream* stream_of(void* handle);
Stream* new_stream(int device);
void delete_stream(Stream*);

// Enqueue one operation on a stream: while the stream captures, it is added to the graph and not run;
// otherwise `work` runs now and the stream's clock moves to max(clock, host clock) + duration_us.
// Returns the operation's start on the simulated clock (for collectives, which wait for their members).
// A range of memory an operation writes (a copy's destination, a collective's receive buffer).
struct WriteRange {
  const void* data = nullptr;
  std::size_t bytes = 0;
};

struct Operation {
  std::string what;           // "kernel triad<double>", "cublasLtMatmul bf16 4096x4096x4096", ...
  double duration_us = 0;     // from the model (cost.h), before any planted slowness
  std::function<void()> work;  // the real computation on host memory; may be empty
  bool repeatable_result = false;  // a graph replay may skip `work` (the same inputs give the same output)
  // Added:
  enum class Kind { memory, compute, communication, other };
  Kind kind = Kind::other;  // which planted slowness applies (slow-hbm: memory only)
  bool launch = false;      // a kernel launch: counts toward a planted sticky fault (faults.h)
  // Set by enqueue_timed (and an event record): the end is decided when it runs; duration_us unused.
  std::function<double(double start_us)> finish;
  // What it writes, where the caller knows (a copy, a set, a collective; empty for an event); unset
  // for a kernel, whose twin may write anywhere its arguments point.
  std::optional<std::vector<WriteRange>> writes;
};
double enqueue(Stream* s, Operation op);

// A collective's hook: an operation whose end is decided after it starts (the slowest member's start
// plus its duration). `finish` gets the start and returns the end; the stream's clock moves to it.
double enqueue_timed(Stream* s, const std::string& what, const std::function<double(double start_us)>& finish,
                     std::optional<std::vector<WriteRange>> writes = std::nullopt);

// The host thread's simulated clock.
double host_clock_us();
// Added: when the last operation enqueued on any stream of the device ends (cudaDeviceSynchronize).
double device_clock_us(int ordinal);
// Added: a duration after the planted slowness and noise of `d` (faults.h) for an operation of `kind`.
double effective_duration_us(const Device& d, double duration_us, Operation::Kind kind);
void wait_for(double clock_us);  // a synchronise: the host clock becomes max(host, clock_us)

// Graphs (cudaStreamBeginCapture .. cudaGraphLaunch): the captured operations, replayed in order.
struct Graph {
  std::vector<Operation> ops;
  mutable int launches = 0;  // added: replays so far (the first runs every `work`, repeatable or not)
};
void launch_graph(const Graph& g, Stream* s);

// Writes to device memory, counted: every operation but a repeatable product (Operation::
// repeatable_result) counts as one when it runs, whether a copy, a set, a kernel or a collective, and
// a library whose repeatable product did write (computed, or a planted flip) notes it. A write with
// Operation::writes set is logged with its ranges; one without (a kernel) may have touched anything.
// A product cache asks whether anything has touched its inputs or its output since a count, without
// reading them (cuBLASLt's emulation: "Repeated identical work ... may be computed once").
std::uint64_t device_write_epoch();
void note_device_write();                                  // anything may have been written
void note_device_write(const void* data, std::size_t bytes);  // this range was written
// True when no write since `epoch` can have touched any of `ranges` (false once the bounded log no
// longer reaches back that far).
bool unwritten_since(std::uint64_t epoch, const std::vector<WriteRange>& ranges);
// What running `op` writes, noted as above (enqueue calls it).
void note_operation_writes(const Operation& op);

// Sticky errors (CUDA Runtime API, cudaGetLastError: "a sticky error ... the process must be
// terminated"): once set, every call on the device returns it.
int sticky_error();             // 0: none
void set_sticky_error(int cuda_error);

}  // namespace gpuscale_emu
