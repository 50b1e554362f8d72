#include "training/cpu/cpu_dp_step.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "core/error.h"
#include "core/fault.h"

namespace gpuscale {
namespace {

constexpr std::size_t kSamplesPerGemm = 8;

void mpi_check(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw Error(fmt::format("{} failed in the dp-step", call), kExitInvalidResult);
}

template <typename T>
class CpuDpStep final : public DpStep {
 public:
  CpuDpStep(const DpStepConfig& config, MPI_Comm group, std::uint64_t seed) : plan_(make_dp_plan(config)), seed_(seed) {
    mpi_check(MPI_Comm_dup(group, &comm_), "MPI_Comm_dup");
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    const auto& c = plan_.config;
    for (const auto& bucket : plan_.buckets)
      if (bucket.elems > static_cast<std::uint64_t>(INT_MAX))
        throw Error(fmt::format("a dp-step gradient bucket of {} elements exceeds MPI's int count", bucket.elems));
    const std::uint64_t d = c.width, b = c.batch, L = static_cast<std::uint64_t>(c.depth);
    weights_.resize(L * d * d);
    activations_.resize((L + 1) * d * b);
    grad_outputs_.resize((L + 1) * d * b);
    grads_.assign(plan_.gradient_elems, T(0));
    const double scale = dp_weight_scale(d);
    for (int l = 0; l < c.depth; ++l) fill(operand({DpArray::weight, l}), d * d, DpInput::weight, l, scale);
    fill(operand({DpArray::activation, 0}), d * b, DpInput::sample, rank_, 1.0);
    fill(operand({DpArray::grad_output, c.depth}), d * b, DpInput::loss_grad, rank_, 1.0);
  }
  ~CpuDpStep() override { MPI_Comm_free(&comm_); }

  double time(DpMode mode, int steps) override {
    mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < steps; ++i) step(mode, nullptr);
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count() / steps;
  }

  CheckResult verify() override {
    const auto points = dp_sample_points(plan_, seed_, kSamplesPerGemm);
    std::vector<DpGemmSample> samples;
    step(DpMode::full, [&](int g) {
      for (auto [i, j] : points[static_cast<std::size_t>(g)]) samples.push_back(sample(g, i, j));
    });
    if (fault_injected("wrong:dp-step")) grads_[0] += T(1000);  // test-only: a reduced gradient certainly wrong
    std::vector<double> local, reduced;
    for (const auto& s : samples) {
      const auto& g = plan_.gemms[static_cast<std::size_t>(s.gemm)];
      if (g.kind != DpGemmKind::weight_grad) continue;
      local.push_back(s.c);
      reduced.push_back(static_cast<double>(static_cast<const T*>(operand(g.c))[s.row + s.col * g.shape.m]));
    }
    std::vector<double> all(local.size() * static_cast<std::size_t>(size_));
    mpi_check(MPI_Allgather(local.data(), static_cast<int>(local.size()), MPI_DOUBLE, all.data(),
                            static_cast<int>(local.size()), MPI_DOUBLE, comm_),
              "MPI_Allgather");
    return dp_check_step(plan_, samples, size_, all, reduced);
  }

  nlohmann::json details() const override {
    nlohmann::json buckets = nlohmann::json::array();
    for (const auto& b : plan_.buckets) buckets.push_back({{"layers", b.layers}, {"bytes", b.elems * sizeof(T)}});
    return {{"library", "cblas"},
            {"routine", sizeof(T) == 8 ? "dgemm" : "sgemm"},
            {"transport", "MPI_Iallreduce (progressed with MPI_Testall between GEMMs)"},
            {"buckets", buckets}};
  }

 private:
  T* operand(const DpOperand& o) {
    const auto& c = plan_.config;
    const std::uint64_t d = c.width, b = c.batch, i = static_cast<std::uint64_t>(o.index);
    switch (o.array) {
      case DpArray::weight: return weights_.data() + i * d * d;
      case DpArray::activation: return activations_.data() + i * d * b;
      case DpArray::grad_output: return grad_outputs_.data() + i * d * b;
      case DpArray::weight_grad: return grads_.data() + plan_.grad_offset[static_cast<std::size_t>(o.index)];
    }
    return nullptr;
  }

  void fill(T* p, std::uint64_t n, DpInput which, int id, double scale) {
    for (std::uint64_t i = 0; i < n; ++i) p[i] = static_cast<T>(dp_input_value(seed_, which, id, i, scale));
  }

  void gemm(const DpGemm& g) {
    const auto& s = g.shape;
    const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
    const int lda = s.trans_a ? k : m, ldb = s.trans_b ? n : k;
    const auto ta = s.trans_a ? CblasTrans : CblasNoTrans, tb = s.trans_b ? CblasTrans : CblasNoTrans;
    const auto t0 = std::chrono::steady_clock::now();
    if constexpr (sizeof(T) == 8)
      cblas_dgemm(CblasColMajor, ta, tb, m, n, k, 1.0, operand(g.a), lda, operand(g.b), ldb, 0.0, operand(g.c), m);
    else
      cblas_sgemm(CblasColMajor, ta, tb, m, n, k, 1.0f, operand(g.a), lda, operand(g.b), ldb, 0.0f, operand(g.c), m);
    // A planted slow GPU (core/fault.h) spends its extra time here, in the step, where the gradient
    // all-reduce of the other ranks waits for it.
    spend_planted(FaultSite::compute, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }

  // C[i][j] of GEMM g with the k products' inputs, as stored right now.
  DpGemmSample sample(int gi, std::uint64_t i, std::uint64_t j) {
    const auto& g = plan_.gemms[static_cast<std::size_t>(gi)];
    const auto& s = g.shape;
    const T* a = operand(g.a);
    const T* b = operand(g.b);
    const std::uint64_t lda = s.trans_a ? s.k : s.m, ldb = s.trans_b ? s.n : s.k;
    DpGemmSample out{gi, i, j, {}, {}, static_cast<double>(operand(g.c)[i + j * s.m])};
    for (std::uint64_t p = 0; p < s.k; ++p) {
      out.a.push_back(static_cast<double>(s.trans_a ? a[p + i * lda] : a[i + p * lda]));
      out.b.push_back(static_cast<double>(s.trans_b ? b[j + p * ldb] : b[p + j * ldb]));
    }
    return out;
  }

  // One step; `after_gemm(g)` runs right after GEMM g (before any all-reduce of its output).
  template <typename F = std::nullptr_t>
  void step(DpMode mode, F after_gemm) {
    std::vector<MPI_Request> pending;
    const MPI_Datatype type = sizeof(T) == 8 ? MPI_DOUBLE : MPI_FLOAT;
    for (const auto& op : plan_.program) {
      if (op.kind == DpOp::gemm) {
        if (mode == DpMode::comm_only) continue;
        gemm(plan_.gemms[static_cast<std::size_t>(op.index)]);
        if constexpr (!std::is_same_v<F, std::nullptr_t>) after_gemm(op.index);
        if (!pending.empty()) {  // let MPI progress the buckets in flight
          int done = 0;
          mpi_check(MPI_Testall(static_cast<int>(pending.size()), pending.data(), &done, MPI_STATUSES_IGNORE),
                    "MPI_Testall");
        }
        continue;
      }
      if (mode == DpMode::compute_only) continue;
      const auto& b = plan_.buckets[static_cast<std::size_t>(op.index)];
      pending.emplace_back();
      mpi_check(MPI_Iallreduce(MPI_IN_PLACE, grads_.data() + b.offset_elems, static_cast<int>(b.elems), type, MPI_SUM,
                               comm_, &pending.back()),
                "MPI_Iallreduce");
    }
    if (!pending.empty())
      mpi_check(MPI_Waitall(static_cast<int>(pending.size()), pending.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  }

  DpPlan plan_;
  std::uint64_t seed_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  std::vector<T> weights_, activations_, grad_outputs_, grads_;
};

}  // namespace

std::unique_ptr<DpStep> make_cpu_dp_step(const DpStepConfig& config, MPI_Comm group, std::uint64_t seed) {
  switch (config.dtype) {
    case DType::fp32: return std::make_unique<CpuDpStep<float>>(config, group, seed);
    case DType::fp64: return std::make_unique<CpuDpStep<double>>(config, group, seed);
    default: throw Error(fmt::format("the CPU dp-step has no {} variant (BLAS: fp32, fp64)", dtype_name(config.dtype)));
  }
}

}  // namespace gpuscale
