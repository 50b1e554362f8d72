#pragma once
// The device half of the backend interface (BabelStream's Stream.h is the model): what a backend must
// offer so the drivers in harness/benchmarks can measure memory bandwidth and GEMM without knowing
// the backend's insides. One implementation per backend: kernels/cpu (OpenMP + BLAS) and
// kernels/cuda (CUDA kernels + cuBLASLt).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/dtype.h"
#include "kernels/copy_engine.h"
#include "kernels/gemm_spec.h"
#include "kernels/stream_table.h"

namespace gpuscale {

struct DeviceInfo {
  std::string backend;                 // "cpu" or "cuda"
  std::string name;                    // CPU model, or the GPU's name as the driver reports it
  int index = 0;                       // GPU ordinal as this process sees it (0 for a CPU)
  std::uint64_t memory_bytes = 0;      // total device (host, for the CPU) memory
  std::uint64_t free_memory_bytes = 0;  // free when the device was opened
  nlohmann::json details = nlohmann::json::object();  // identity and configuration, backend-specific

  // How this rank's share of the free memory is found: the device sets these, and every memory check
  // (the plan's, the collectives' sweep, dp-step's model) asks usable_memory_bytes().
  std::uint64_t reserved_memory_bytes = 0;  // of the free memory, kept for the runtime (CUDA context, libraries)
  std::string reserved_for;                 // what it is kept for: "the CUDA context and libraries"
  int ranks_sharing_memory = 1;             // ranks dividing the free memory (the CPU backend's ranks on a node)
  std::string memory_owner;                 // whose memory, in messages: "the host", "GPU 0 (NVIDIA H200)"
  // Why the free memory could not be read (empty: it was). Then no memory check refuses anything: the
  // run says so once and records it (details.memory_unread), and the plan's sizes stand as given.
  std::string memory_unread;

  // The rank's usable share: (free - reserved) / ranks sharing; UINT64_MAX (no limit) when unread.
  std::uint64_t usable_memory_bytes() const;
  // The share in words, for a refusal: "each of the 2 ranks on this node may use 4.00 GiB (...) of the
  // host's 8.00 GiB (...) available", "GPU 0 (NVIDIA H200) has 139.50 GiB (...) available, 256.00 MiB (...)
  // of it kept for the CUDA context and libraries".
  std::string usable_memory_text() const;
};

// Result of an analytic check of a kernel's output. wrong > 0 marks the measurement invalid.
struct CheckResult {
  std::uint64_t checked = 0;
  std::uint64_t wrong = 0;
  double max_error = 0;  // largest error seen, relative to the tolerance's scale
  std::string detail;    // first wrong value, for the error message
};

// Arrays a, b, c of one dtype on the device, filled with random values from the seed
// (stream_input_value). Kernels run in place on them; verify() checks an op's output elementwise.
class StreamArrays {
 public:
  virtual ~StreamArrays() = default;
  virtual double run(StreamOp op) = 0;  // one pass of the kernel; seconds on the device's own clock
  virtual CheckResult verify(StreamOp op) = 0;
};

// A GEMM output's digest: `config` hashes what decides its bits (library, routine or algorithm, types),
// so only ranks whose configs are equal are compared; `blocks` as block_digests gives them.
struct OutputDigest {
  std::uint64_t config = 0;
  std::uint64_t elements = 0;  // of the output (a block's elements: digest_block_range)
  std::vector<std::uint64_t> blocks;
};

// One GEMM problem with random inputs on the device.
class GemmProblem {
 public:
  virtual ~GemmProblem() = default;
  // One timed call: products_per_call() products back to back, and the seconds of one on the device's
  // own clock. The device picks the count so a call outlasts its launch cost (the CUDA device: a graph
  // of about 2 ms of products); the gemm benchmark and the burn-in time this.
  virtual double run() = 0;
  virtual int products_per_call() const { return 1; }
  // Exactly one product, and its seconds on the device's clock: where the caller counts the work
  // itself (a training step runs each of its GEMMs once, and times the step as a whole).
  virtual double run_one() = 0;
  virtual CheckResult verify() = 0;
  virtual nlohmann::json details() const { return nlohmann::json::object(); }  // e.g. the algorithm chosen
  // The last product's digest (kernels/output_digest.h), which ranks that ran the same product compare
  // bit for bit (silent data corruption); a planted flip-bit fault really flips a bit of the output
  // first. Empty blocks when the device cannot give one.
  virtual OutputDigest output_digest() { return {}; }
  // The digests of the elements [range.first, range.last) of that same output (as output_digest saw
  // it, a planted flip included), in min(kDigestBlocks, its size) parts: how a disagreement is narrowed
  // to its first element (harness/benchmarks/burn/sdc_agreement.h). Empty when the device cannot give them.
  virtual std::vector<std::uint64_t> range_digests(std::uint64_t first, std::uint64_t last) {
    (void)first, (void)last;
    return {};
  }
};

// A checkpoint shard held in device memory (harness/benchmarks/checkpoint/checkpoint.cpp): it goes to storage and
// comes back a chunk at a time through a page-aligned host buffer, each copy synchronous and timed with
// the I/O, as a training job's checkpoint from GPU memory is. A device whose memory is the host's (the CPU
// backend) has none: its shard is written from host memory directly.
class ShardStaging {
 public:
  virtual ~ShardStaging() = default;
  virtual std::string path() const = 0;  // what the row records: "pinned_staging"
  virtual unsigned char* host() = 0;     // the host buffer (chunk bytes, page-aligned for O_DIRECT)
  // Bytes [offset, offset + bytes) of the device shard into host(), and host() into them.
  virtual void to_host(std::uint64_t offset, std::uint64_t bytes) = 0;
  virtual void from_host(std::uint64_t offset, std::uint64_t bytes) = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  // The device's clock, in seconds from any origin, read once the work enqueued so far has finished:
  // how a span of device work that no event pair covers (a training step of GEMMs and collectives) is
  // timed. The CPU's work is done when its call returns: the host's steady clock. A GPU's: its own timer
  // after a synchronise (events), which an emulated GPU keeps as its simulated clock.
  virtual double clock_s();

  virtual std::vector<StreamOp> stream_ops() const = 0;
  virtual std::vector<DType> stream_dtypes() const = 0;
  // Default bytes per STREAM array: large enough that the figure is memory, not cache, bandwidth.
  virtual std::uint64_t default_stream_array_bytes() const = 0;
  virtual std::unique_ptr<StreamArrays> make_stream(DType type, std::uint64_t elements, std::uint64_t seed) = 0;

  virtual std::vector<DType> gemm_dtypes() const = 0;
  // Why this device cannot run a GEMM at `type` (nullopt when it can).
  virtual std::optional<std::string> gemm_unsupported(DType type) const = 0;
  virtual std::unique_ptr<GemmProblem> make_gemm(DType type, const GemmShape& shape, std::uint64_t seed) = 0;
  // Why this device cannot run this shape at `type` (a layout its library lacks); nullopt when it can.
  virtual std::optional<std::string> gemm_shape_unsupported(DType type, const GemmShape& shape) const {
    (void)type;
    (void)shape;
    return std::nullopt;
  }

  // Copy bandwidth (host <-> device, peer to peer), when the device has copy engines; the engine is
  // owned by the device. nullptr: the copy benchmarks do not run on this device.
  virtual CopyEngine* copies() const { return nullptr; }

  // A shard of `shard_bytes` in device memory with a host buffer of `chunk_bytes`; nullptr where the
  // device's memory is the host's. Throws gpuscale::Error when the shard does not fit.
  virtual std::unique_ptr<ShardStaging> make_shard_staging(std::uint64_t shard_bytes, std::uint64_t chunk_bytes) {
    (void)shard_bytes;
    (void)chunk_bytes;
    return nullptr;
  }
};

}  // namespace gpuscale
