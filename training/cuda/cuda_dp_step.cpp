#include "training/cuda/cuda_dp_step.h"

#include <algorithm>
#include <map>
#include <string>

#include <fmt/format.h>

#include "collectives/nccl/nccl_plan.h"
#include "core/error.h"
#include "core/fault.h"
#include "core/units.h"
#include "kernels/cuda/cuda_lt.h"
#include "kernels/cuda/host_clock.h"
#include "kernels/cuda/gemm_kernels.cuh"
#include "training/cuda/dp_kernels.cuh"

namespace gpuscale {
namespace {

using cuda::check;
using cuda::DeviceMemory;

constexpr int kThreads = 256;
constexpr std::size_t kSamplesPerGemm = 8;

// One GEMM kind's cuBLASLt problem and the heuristic's first algorithm (what frameworks run).
struct LtGemm {
  std::unique_ptr<cuda::LtProblem> problem;
  cublasLtMatmulAlgo_t algo{};
  nlohmann::json config;
};

// Device buffers of one GEMM's samples: rows and columns asked for, and what gemm_gather writes.
struct SampleBuffers {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> points;
  DeviceMemory rows, cols, a, b, c;
};

class CudaDpStep final : public DpStep {
 public:
  CudaDpStep(const DpStepConfig& config, nccl::Comm& comm, std::uint64_t seed)
      : plan_(make_dp_plan(config)), comm_(comm), seed_(seed), ordinal_(comm.ordinal()) {
    cuda::ScopedDevice on(ordinal_);
    const auto& c = plan_.config;
    const DType out = cuda::gemm_output_type(c.dtype);
    if (out != c.dtype) throw Error(fmt::format("dp-step has no {} variant", dtype_name(c.dtype)), kExitInvalidResult);
    nccl_type_ = nccl::nccl_type(c.dtype);
    check(cublasLtCreate(&lt_handle_), "cublasLtCreate");
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    if (auto why = cuda::memory_shortfall(
            fmt::format("dp-step width {} depth {} batch {} {}", c.width, c.depth, c.batch, dtype_name(c.dtype)),
            dp_memory_bytes(c) + cuda::kGemmWorkspaceBytes, free, ordinal_))
      throw Error(*why, kExitInvalidResult);
    const std::uint64_t es = dtype_size(c.dtype), d = c.width, b = c.batch, L = static_cast<std::uint64_t>(c.depth);
    weights_ = DeviceMemory(ordinal_, L * d * d * es);
    activations_ = DeviceMemory(ordinal_, (L + 1) * d * b * es);
    grad_outputs_ = DeviceMemory(ordinal_, (L + 1) * d * b * es);
    grads_ = DeviceMemory(ordinal_, plan_.gradient_elems * es);
    workspace_ = DeviceMemory(ordinal_, cuda::kGemmWorkspaceBytes);
    const auto s = compute_.get();
    for (int l = 0; l < c.depth; ++l)
      fill(operand({DpArray::weight, l}), d * d, DpInput::weight, l, dp_weight_scale(d));
    fill(operand({DpArray::activation, 0}), d * b, DpInput::sample, comm.rank(), 1.0);
    fill(operand({DpArray::grad_output, c.depth}), d * b, DpInput::loss_grad, comm.rank(), 1.0);
    check(cudaMemsetAsync(grads_.get(), 0, grads_.bytes(), s), "cudaMemsetAsync");
    for (const auto& g : plan_.gemms) lt_gemm(g);
    for (std::size_t i = 0; i < plan_.buckets.size(); ++i) bucket_ready_.push_back(std::make_unique<cuda::Event>());
    compute_.synchronize();
  }

  ~CudaDpStep() override {
    if (lt_handle_ != nullptr) cublasLtDestroy(lt_handle_);
  }

  double time(DpMode mode, int steps) override {
    cuda::ScopedDevice on(ordinal_);
    const std::string what = fmt::format("dp-step ({} steps)", steps);
    comm_.barrier(what);
    const double t0 = cuda::host_clock_s();  // the emulated node's simulated clock there (host_clock.h)
    for (int i = 0; i < steps; ++i) enqueue(mode, nullptr);
    comm_.wait(compute_.get(), what);
    return (cuda::host_clock_s() - t0) / steps;
  }

  CheckResult verify() override {
    cuda::ScopedDevice on(ordinal_);
    const auto points = dp_sample_points(plan_, seed_, kSamplesPerGemm);
    std::vector<SampleBuffers> during(plan_.gemms.size()), after(plan_.gemms.size());
    for (std::size_t g = 0; g < plan_.gemms.size(); ++g) {
      prepare_samples(during[g], plan_.gemms[g], points[g]);
      if (plan_.gemms[g].kind == DpGemmKind::weight_grad) prepare_samples(after[g], plan_.gemms[g], points[g]);
    }
    enqueue(DpMode::full, &during);
    if (fault_injected("wrong:dp-step"))  // test-only: one reduced gradient entry that is certainly wrong
      check(cudaMemsetAsync(grads_.get(), 0x7f, dtype_size(plan_.config.dtype), compute_.get()), "cudaMemsetAsync");
    for (std::size_t g = 0; g < plan_.gemms.size(); ++g)
      if (plan_.gemms[g].kind == DpGemmKind::weight_grad) gather(plan_.gemms[g], after[g]);
    comm_.wait(compute_.get(), "the verified dp-step");

    std::vector<DpGemmSample> samples;
    std::vector<double> local, reduced;
    for (std::size_t g = 0; g < plan_.gemms.size(); ++g) {
      const std::uint64_t k = plan_.gemms[g].shape.k, n = during[g].points.size();
      std::vector<double> a(n * k), b(n * k), c(n);
      download(a, during[g].a);
      download(b, during[g].b);
      download(c, during[g].c);
      for (std::uint64_t p = 0; p < n; ++p)
        samples.push_back({static_cast<int>(g), during[g].points[p].first, during[g].points[p].second,
                           std::vector<double>(a.begin() + static_cast<std::ptrdiff_t>(p * k),
                                               a.begin() + static_cast<std::ptrdiff_t>((p + 1) * k)),
                           std::vector<double>(b.begin() + static_cast<std::ptrdiff_t>(p * k),
                                               b.begin() + static_cast<std::ptrdiff_t>((p + 1) * k)),
                           c[p]});
      if (plan_.gemms[g].kind == DpGemmKind::weight_grad) {
        std::vector<double> r(n);
        download(r, after[g].c);
        local.insert(local.end(), c.begin(), c.end());
        reduced.insert(reduced.end(), r.begin(), r.end());
      }
    }
    // Every rank's gradients before the all-reduce, to sum on the host.
    std::vector<double> all(local.size() * static_cast<std::size_t>(comm_.size()));
    MPI_Request req;
    MPI_Iallgather(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, all.data(), static_cast<int>(local.size()),
                   MPI_DOUBLE, comm_.mpi(), &req);
    comm_.wait_mpi(req, "exchanging the dp-step's gradient samples");
    return dp_check_step(plan_, samples, comm_.size(), all, reduced);
  }

  nlohmann::json details() const override {
    nlohmann::json algos = nlohmann::json::object();
    for (const auto& [kind, g] : lt_) algos[kind] = g.config;
    return {{"library", fmt::format("cuBLASLt {}", cuda_versions_text())},
            {"algorithms", algos},
            {"transport", "nccl"},
            {"nccl_version", nccl::version_text(nccl::runtime_version())},
            {"buckets", bucket_json()}};
  }

 private:
  static std::string cuda_versions_text() {
    const std::size_t v = cublasLtGetVersion();
    return fmt::format("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100);
  }

  nlohmann::json bucket_json() const {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& b : plan_.buckets) j.push_back({{"layers", b.layers}, {"bytes", b.elems * dtype_size(plan_.config.dtype)}});
    return j;
  }

  void* operand(const DpOperand& o) const {
    const auto& c = plan_.config;
    const std::uint64_t es = dtype_size(c.dtype), d = c.width, b = c.batch, i = static_cast<std::uint64_t>(o.index);
    switch (o.array) {
      case DpArray::weight: return static_cast<std::byte*>(weights_.get()) + i * d * d * es;
      case DpArray::activation: return static_cast<std::byte*>(activations_.get()) + i * d * b * es;
      case DpArray::grad_output: return static_cast<std::byte*>(grad_outputs_.get()) + i * d * b * es;
      case DpArray::weight_grad:
        return static_cast<std::byte*>(grads_.get()) + plan_.grad_offset[static_cast<std::size_t>(o.index)] * es;
    }
    return nullptr;
  }

  int blocks(std::uint64_t n) const {
    int sms = 1;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ordinal_), "cudaDeviceGetAttribute");
    return cuda::grid_blocks(sms, 8, kThreads, n, 1);
  }

  void fill(void* p, std::uint64_t n, DpInput which, int id, double scale) {
    check(cuda::dp_fill(plan_.config.dtype, p, n, seed_, which, id, scale, blocks(n), kThreads, compute_.get()),
          "dp_fill launch");
  }

  static const char* kind_name(DpGemmKind k) {
    return k == DpGemmKind::forward ? "forward" : k == DpGemmKind::weight_grad ? "weight_grad" : "input_grad";
  }

  // The cuBLASLt problem of a GEMM's kind (all GEMMs of one kind share a shape), made on first use.
  LtGemm& lt_gemm(const DpGemm& g) {
    auto& e = lt_[kind_name(g.kind)];
    if (e.problem) return e;
    e.problem = std::make_unique<cuda::LtProblem>(plan_.config.dtype, g.shape);
    const auto found = e.problem->heuristic(lt_handle(), 1);
    if (found.empty())
      throw Error(fmt::format("cuBLASLt has no algorithm for the dp-step's {} GEMM {} {}", kind_name(g.kind),
                              format_gemm_shape(g.shape), dtype_name(plan_.config.dtype)),
                  kExitInvalidResult);
    e.algo = found.front().algo;
    e.config = cuda::algo_config(e.algo);
    e.config["shape"] = format_gemm_shape(g.shape);
    return e;
  }
  cublasLtHandle_t lt_handle() const { return lt_handle_; }

  // One step's work on the streams; with `samples`, each GEMM's sampled entries are gathered right
  // after it (so a dW is read before its all-reduce overwrites it).
  void enqueue(DpMode mode, std::vector<SampleBuffers>* samples) {
    const auto cs = compute_.get(), ms = comm_stream_.get();
    bool communicated = false;
    for (const auto& op : plan_.program) {
      if (op.kind == DpOp::gemm) {
        if (mode == DpMode::comm_only) continue;
        const auto& g = plan_.gemms[static_cast<std::size_t>(op.index)];
        const auto& lt = lt_gemm(g);
        cuda::lt_matmul(lt_handle(), *lt.problem, lt.algo, operand(g.a), operand(g.b), operand(g.c), workspace_.get(),
                        cuda::kGemmWorkspaceBytes, cs);
        if (samples) gather(g, (*samples)[static_cast<std::size_t>(op.index)]);
        continue;
      }
      if (mode == DpMode::compute_only) continue;
      const auto& b = plan_.buckets[static_cast<std::size_t>(op.index)];
      if (mode == DpMode::full) {
        auto& ready = *bucket_ready_[static_cast<std::size_t>(op.index)];
        ready.record(cs);
        check(cudaStreamWaitEvent(ms, ready.get(), 0), "cudaStreamWaitEvent");
      }
      void* p = static_cast<std::byte*>(grads_.get()) + b.offset_elems * dtype_size(plan_.config.dtype);
      comm_.call(ncclAllReduce(p, p, b.elems, nccl_type_, ncclSum, comm_.get(), ms), "ncclAllReduce",
                 "the dp-step's gradient all-reduce");
      communicated = true;
    }
    if (communicated) {  // the next step's dW must not overwrite gradients still being reduced
      comm_done_.record(ms);
      check(cudaStreamWaitEvent(cs, comm_done_.get(), 0), "cudaStreamWaitEvent");
    }
  }

  void prepare_samples(SampleBuffers& s, const DpGemm& g, const std::vector<std::pair<std::uint64_t, std::uint64_t>>& pts) {
    s.points = pts;
    const std::uint64_t n = pts.size(), k = g.shape.k;
    std::vector<std::uint64_t> rows, cols;
    for (auto [i, j] : pts) {
      rows.push_back(i);
      cols.push_back(j);
    }
    s.rows = DeviceMemory(ordinal_, n * 8);
    s.cols = DeviceMemory(ordinal_, n * 8);
    s.a = DeviceMemory(ordinal_, n * k * 8);
    s.b = DeviceMemory(ordinal_, n * k * 8);
    s.c = DeviceMemory(ordinal_, n * 8);
    check(cudaMemcpy(s.rows.get(), rows.data(), n * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(s.cols.get(), cols.data(), n * 8, cudaMemcpyHostToDevice), "cudaMemcpy");
  }

  void gather(const DpGemm& g, SampleBuffers& s) {
    const std::uint64_t n = s.points.size(), k = g.shape.k;
    cuda::GemmGather gg{plan_.config.dtype, plan_.config.dtype, g.shape.m, g.shape.n, g.shape.k, g.shape.trans_a,
                        g.shape.trans_b, operand(g.a), operand(g.b), operand(g.c), s.rows.as<std::uint64_t>(),
                        s.cols.as<std::uint64_t>(), static_cast<int>(n), s.a.as<double>(), s.b.as<double>(),
                        s.c.as<double>()};
    check(cuda::gemm_gather(gg, {blocks(n * k), kThreads}, compute_.get()), "gemm_gather launch");
  }

  void download(std::vector<double>& host, const DeviceMemory& d) const {
    check(cudaMemcpy(host.data(), d.get(), host.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }

  DpPlan plan_;
  nccl::Comm& comm_;
  std::uint64_t seed_;
  int ordinal_;
  ncclDataType_t nccl_type_ = ncclFloat32;
  cublasLtHandle_t lt_handle_ = nullptr;
  std::map<std::string, LtGemm> lt_;
  cuda::Stream compute_, comm_stream_;
  cuda::Event comm_done_;
  std::vector<std::unique_ptr<cuda::Event>> bucket_ready_;
  DeviceMemory weights_, activations_, grad_outputs_, grads_, workspace_;
};

}  // namespace

std::unique_ptr<DpStep> make_cuda_dp_step(const DpStepConfig& config, nccl::Comm& comm, std::uint64_t seed) {
  cuda::ScopedDevice on(comm.ordinal());
  return std::make_unique<CudaDpStep>(config, comm, seed);
}

}  // namespace gpuscale
