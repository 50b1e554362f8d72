// The CUDA device: opens one GPU, records who it is (name, UUID, PCI ids, SMs, clocks, memory, compute
// capability) and hands out STREAM arrays, cuBLASLt GEMMs and the copy engine.
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cpu_binding.h"

#include <array>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "core/error.h"
#include "kernels/cpu/cpu_topology.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/gpu_identity.h"
#include "kernels/cuda/nic_probe.h"
#include "kernels/sysfs_root.h"

#ifndef GPUSCALE_CUDA_ARCHS_TEXT
#error "GPUSCALE_CUDA_ARCHS_TEXT must name the architectures the kernels were built for"
#endif

namespace gpuscale {
namespace cuda {

CudaContext::CudaContext(int ordinal_, int sm_count_, ComputeCapability cc_)
    : ordinal(ordinal_), sm_count(sm_count_), cc(cc_) {
  check(cublasLtCreate(&lt), "cublasLtCreate");
}

CudaContext::~CudaContext() {
  if (lt != nullptr) cublasLtDestroy(lt);
}

std::uint64_t CudaContext::free_memory() const {
  ScopedDevice on(ordinal);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

StreamLaunch helper_launch(int ordinal, std::uint64_t n) {
  int sms = 1;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal), "cudaDeviceGetAttribute");
  return {grid_blocks(sms, 8, kStreamThreads, n, 1), kStreamThreads};
}

void require_memory(std::string_view what, std::uint64_t needed, int ordinal) {
  ScopedDevice on(ordinal);
  std::size_t free = 0, total = 0;
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  if (auto why = memory_shortfall(what, needed, free, ordinal)) throw Error(*why, kExitInvalidResult);
}

namespace {

int attribute(cudaDeviceAttr attr, int ordinal) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, attr, ordinal), "cudaDeviceGetAttribute");
  return v;
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(const CudaDeviceOptions& o) {
    char bus[32] = {};
    const auto sys = sysfs_root();  // /sys; a test's fake tree under GPUSCALE_TEST_SYSFS_ROOT
    CpuBinding cpu_binding;
    for (const auto step : kDeviceOpenOrder) switch (step) {  // the order and why: kernels/cuda/cuda_plan.h
        case DeviceOpenStep::read_pci_bus_id:
          check(cudaDeviceGetPCIBusId(bus, sizeof bus, o.ordinal), "cudaDeviceGetPCIBusId");
          break;
        case DeviceOpenStep::bind_cpus: cpu_binding = bind_to_gpu_numa_node(sys, bus); break;
        case DeviceOpenStep::set_device: check(cudaSetDevice(o.ordinal), "cudaSetDevice"); break;
        case DeviceOpenStep::create_context: check(cudaFree(nullptr), "cudaFree (creating the CUDA context)"); break;
      }
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, o.ordinal), "cudaGetDeviceProperties");
    const ComputeCapability cc{p.major, p.minor};
    if (!build_runs_on(GPUSCALE_CUDA_ARCHS_TEXT, cc))
      throw Error(fmt::format("GPU {} ({}) has compute capability {}, but this gpuscale carries code only for "
                              "CUDA architectures {} (rebuild with -DGPUSCALE_CUDA_ARCHS={}{})",
                              o.ordinal, p.name, format_cc(cc), GPUSCALE_CUDA_ARCHS_TEXT, cc.major, cc.minor),
                  kExitNoDevice);
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    unsigned char uuid[16];
    static_assert(sizeof(p.uuid.bytes) == 16);
    for (int i = 0; i < 16; ++i) uuid[i] = static_cast<unsigned char>(p.uuid.bytes[i]);
    const auto pci_id = read_pci_device_id(sys, bus);
    const int sm_clock_khz = attribute(cudaDevAttrClockRate, o.ordinal);
    const int mem_clock_khz = attribute(cudaDevAttrMemoryClockRate, o.ordinal);
    const int bus_width = attribute(cudaDevAttrGlobalMemoryBusWidth, o.ordinal);

    ctx_ = std::make_unique<CudaContext>(o.ordinal, p.multiProcessorCount, cc);
    ctx_->name = p.name;
    sizing_ = cuda::default_stream_array_bytes(static_cast<std::uint64_t>(p.l2CacheSize), free);
    copies_ = make_cuda_copy_engine(*ctx_);
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    const auto versions = cuda_versions();

    info_.backend = "cuda";
    info_.name = p.name;
    info_.index = o.ordinal;
    info_.memory_bytes = total;
    info_.free_memory_bytes = free;
    info_.reserved_memory_bytes = cuda::kMemoryHeadroom;
    info_.reserved_for = "the CUDA context and libraries";
    info_.memory_owner = fmt::format("GPU {} ({})", o.ordinal, p.name);
    info_.details = {
        {"uuid", format_gpu_uuid(uuid)},
        {"pci_bus_id", bus},
        {kDetailPciDeviceId, pci_id ? nlohmann::json(format_pci_id(*pci_id)) : nlohmann::json(nullptr)},
        {kDetailComputeCapability, format_cc(cc)},
        {kDetailSmCount, p.multiProcessorCount},
        {"max_sm_clock_mhz", sm_clock_khz / 1000},
        {"max_memory_clock_mhz", mem_clock_khz / 1000},
        {"memory_bus_width_bits", bus_width},
        {"l2_cache_bytes", p.l2CacheSize},
        {"visible_gpus", copies_->visible_gpus()},
        {"binding", o.binding},
        {"cpu_binding",
         {{"cpus", format_cpulist(cpu_binding.cpus)}, {"bound", cpu_binding.bound}, {"rule", cpu_binding.rule}}},
        {"cuda_visible_devices", visible ? nlohmann::json(visible) : nlohmann::json(nullptr)},
        {"driver_cuda_version", versions.driver},
        {"default_stream_array_bytes", sizing_.bytes},
        {"stream_array_capped_by_memory", sizing_.capped},
        {"cpu_model", read_cpu_topology().model},
        {"clocks_note", "maximum clocks as the CUDA runtime reports them; current clocks and power limits need NVML"},
    };
    // The NIC its inter-node traffic leaves by (the rail outliers name it: docs/fleet.md "Rails").
    const char* hca = std::getenv("NCCL_IB_HCA");
    const char* topo = std::getenv("NCCL_TOPO_FILE");
    info_.details.update(nic_details(sys, bus, hca ? hca : "", topo ? topo : ""));
  }

  const DeviceInfo& info() const override { return info_; }

  // The GPU's own timer at a moment it is idle: every stream's work finished (NCCL's too), then an
  // event on the idle stream. Each reading adds the interval from the last one in double: an event
  // pair's float milliseconds keep their precision over one interval, not over hours.
  double clock_s() override {
    ScopedDevice on(ctx_->ordinal);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (!clock_events_[0]) clock_events_ = {std::make_unique<Event>(), std::make_unique<Event>()};
    Event& now = *clock_events_[clock_next_];
    now.record(ctx_->stream.get());
    if (clock_read_)
      clock_seconds_ += elapsed_seconds(*clock_events_[1 - clock_next_], now);
    else
      check(cudaEventSynchronize(now.get()), "cudaEventSynchronize");
    clock_read_ = true;
    clock_next_ = 1 - clock_next_;
    return clock_seconds_;
  }

  std::vector<StreamOp> stream_ops() const override {
    std::vector<StreamOp> ops;
    for (const auto& k : kStreamKernels) ops.push_back(k.op);
    return ops;
  }
  std::vector<DType> stream_dtypes() const override { return dtypes_for(kForStream); }
  std::uint64_t default_stream_array_bytes() const override { return sizing_.bytes; }
  std::unique_ptr<StreamArrays> make_stream(DType type, std::uint64_t elements, std::uint64_t seed) override {
    return make_cuda_stream(*ctx_, type, elements, seed);
  }

  std::vector<DType> gemm_dtypes() const override {  // the types cuBLASLt has a GEMM for (core/dtype_table.def)
    std::vector<DType> out;
#define GPUSCALE_DTYPE_CUBLASLT(id, ...) out.push_back(DType::id);
#include "core/dtype_table.def"
    return out;
  }
  std::optional<std::string> gemm_unsupported(DType type) const override {
    return gemm_dtype_unsupported(type, ctx_->cc);
  }
  std::optional<std::string> gemm_shape_unsupported(DType type, const GemmShape& shape) const override {
    if (auto why = gemm_layout_unsupported(type, ctx_->cc, shape)) return why;
    return cuda_gemm_unsupported(*ctx_, type, shape);
  }
  std::unique_ptr<GemmProblem> make_gemm(DType type, const GemmShape& shape, std::uint64_t seed) override {
    if (auto why = gemm_unsupported(type)) throw Error(*why, kExitInvalidResult);
    return make_cuda_gemm(*ctx_, type, shape, seed);
  }

  CopyEngine* copies() const override { return copies_.get(); }
  std::unique_ptr<ShardStaging> make_shard_staging(std::uint64_t shard_bytes, std::uint64_t chunk_bytes) override {
    return make_cuda_shard_staging(*ctx_, shard_bytes, chunk_bytes);
  }

 private:
  std::unique_ptr<CudaContext> ctx_;
  std::unique_ptr<CopyEngine> copies_;
  ArraySizing sizing_;
  DeviceInfo info_;
  std::array<std::unique_ptr<Event>, 2> clock_events_;  // clock_s's last reading and the next
  int clock_next_ = 0;
  bool clock_read_ = false;
  double clock_seconds_ = 0;
};

std::string version_text(int v) { return fmt::format("{}.{}", v / 1000, (v % 1000) / 10); }

}  // namespace
}  // namespace cuda

std::unique_ptr<Device> make_cuda_device(const CudaDeviceOptions& opts) {
  return std::make_unique<cuda::CudaDevice>(opts);
}

int cuda_device_count(std::string* why_none) {
  int n = 0;
  const cudaError_t rc = cudaGetDeviceCount(&n);
  if (rc != cudaSuccess) {
    if (why_none) *why_none = fmt::format("{} ({})", cudaGetErrorString(rc), cudaGetErrorName(rc));
    cudaGetLastError();  // clear it: the CPU fallback must not trip over it
    return 0;
  }
  if (n == 0 && why_none) *why_none = "the CUDA runtime reports 0 devices";
  return n;
}

std::vector<std::string> cuda_device_uuids() {
  int n = 0;
  cuda::check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    cuda::check(cudaGetDeviceProperties(&p, i), "cudaGetDeviceProperties");
    unsigned char uuid[16];
    for (int b = 0; b < 16; ++b) uuid[b] = static_cast<unsigned char>(p.uuid.bytes[b]);
    out.push_back(cuda::format_gpu_uuid(uuid));
  }
  return out;
}

CudaVersions cuda_versions() {
  CudaVersions v;
  int driver = 0, runtime = 0;
  v.driver = cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0 ? cuda::version_text(driver) : "none";
  v.runtime = cudaRuntimeGetVersion(&runtime) == cudaSuccess ? cuda::version_text(runtime) : "unknown";
  const std::size_t lt = cublasLtGetVersion();
  v.cublaslt = fmt::format("{}.{}.{}", lt / 10000, (lt % 10000) / 100, lt % 100);
  return v;
}

}  // namespace gpuscale
