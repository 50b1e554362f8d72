// GEMM through cuBLASLt at every dtype: random inputs generated on the GPU, the top-K algorithms of
// cuBLASLt's heuristic each timed with a workspace, the fastest kept (and recorded), products timed
// in batches with CUDA events, and sampled entries of C checked against a long-double reference
// computed from the inputs exactly as the GPU stored them.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/fault.h"
#include "core/stats.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/cuda_internal.h"
#include "kernels/cuda/cuda_lt.h"
#include "kernels/cuda/gemm_kernels.cuh"
#include "kernels/output_digest.h"

namespace gpuscale::cuda {
namespace {

class CudaGemm final : public GemmProblem {
 public:
  CudaGemm(CudaContext& ctx, DType type, const GemmShape& s, std::uint64_t seed)
      : ctx_(ctx), type_(type), out_type_(gemm_output_type(type)), s_(s), seed_(seed), lt_(type, s) {
    require_memory(fmt::format("GEMM {} {} (A, B, C and a {} MiB workspace)", format_gemm_shape(s), dtype_name(type),
                               kGemmWorkspaceBytes >> 20),
                   gemm_device_bytes(type, s, kGemmWorkspaceBytes), ctx.ordinal);
    const std::uint64_t in = dtype_size(type);
    a_ = DeviceMemory(ctx.ordinal, s.m * s.k * in);
    b_ = DeviceMemory(ctx.ordinal, s.k * s.n * in);
    c_ = DeviceMemory(ctx.ordinal, s.m * s.n * dtype_size(out_type_));
    workspace_ = DeviceMemory(ctx.ordinal, kGemmWorkspaceBytes);
    const auto st = ctx.stream.get();
    check(gemm_fill(type, a_.get(), s.m * s.k, seed, kMatrixA, helper_launch(ctx.ordinal, s.m * s.k), st), "gemm_fill launch");
    check(gemm_fill(type, b_.get(), s.k * s.n, seed, kMatrixB, helper_launch(ctx.ordinal, s.k * s.n), st), "gemm_fill launch");
    check(cudaMemsetAsync(c_.get(), 0, c_.bytes(), st), "cudaMemsetAsync");
    ctx.stream.synchronize();
    choose_algorithm();
    capture_batch();
  }
  CudaGemm(const CudaGemm&) = delete;
  CudaGemm& operator=(const CudaGemm&) = delete;
  ~CudaGemm() override {
    if (graph_) cudaGraphExecDestroy(graph_);
  }

  double run() override {
    const auto st = ctx_.stream.get();
    start_.record(st);
    if (graph_)
      check(cudaGraphLaunch(graph_, st), "cudaGraphLaunch");
    else
      for (int i = 0; i < batch_; ++i) matmul(algo_);
    stop_.record(st);
    const double seconds = elapsed_seconds(start_, stop_) / batch_;
    corrupt_if_planted();
    return seconds;
  }
  int products_per_call() const override { return batch_; }

  double run_one() override {
    const auto st = ctx_.stream.get();
    start_.record(st);
    matmul(algo_);
    stop_.record(st);
    const double seconds = elapsed_seconds(start_, stop_);
    corrupt_if_planted();
    return seconds;
  }

  CheckResult verify() override {
    // The entries the fault switch corrupts is included, so a wrong GEMM cannot hide between samples.
    // Rows of op(A) and columns of op(B) are gathered for each sample: at most ~128 MiB of doubles.
    const std::uint64_t k = s_.k;
    const std::size_t fit = static_cast<std::size_t>(std::max<std::uint64_t>((128ULL << 20) / (16 * k), 5));
    auto points = gemm_sample_points(s_, seed_, 60);
    points.resize(std::min(points.size(), fit - 1));
    points.emplace_back(s_.m / 2, s_.n / 2);
    const int count = static_cast<int>(points.size());
    std::vector<std::uint64_t> rows, cols;
    for (auto [i, j] : points) {
      rows.push_back(i);
      cols.push_back(j);
    }
    const std::uint64_t per = static_cast<std::uint64_t>(count) * k;
    DeviceMemory d_rows(ctx_.ordinal, rows.size() * 8), d_cols(ctx_.ordinal, cols.size() * 8);
    DeviceMemory d_a(ctx_.ordinal, per * 8), d_b(ctx_.ordinal, per * 8), d_c(ctx_.ordinal, rows.size() * 8);
    const auto st = ctx_.stream.get();
    check(cudaMemcpyAsync(d_rows.get(), rows.data(), rows.size() * 8, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(d_cols.get(), cols.data(), cols.size() * 8, cudaMemcpyHostToDevice, st), "cudaMemcpyAsync");
    GemmGather g{type_, out_type_, s_.m, s_.n, s_.k, s_.trans_a, s_.trans_b, a_.get(), b_.get(), c_.get(),
                 d_rows.as<std::uint64_t>(), d_cols.as<std::uint64_t>(), count, d_a.as<double>(), d_b.as<double>(),
                 d_c.as<double>()};
    check(gemm_gather(g, helper_launch(ctx_.ordinal, per), st), "gemm_gather launch");
    std::vector<double> ha(per), hb(per), hc(static_cast<std::size_t>(count));
    check(cudaMemcpyAsync(ha.data(), d_a.get(), per * 8, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(hb.data(), d_b.get(), per * 8, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    check(cudaMemcpyAsync(hc.data(), d_c.get(), hc.size() * 8, cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    ctx_.stream.synchronize();

    CheckResult r;
    for (int t = 0; t < count; ++t) {
      const double* a = ha.data() + static_cast<std::uint64_t>(t) * k;
      const double* b = hb.data() + static_cast<std::uint64_t>(t) * k;
      const auto e = check_gemm_entry(type_, k, hc[t], [&](std::uint64_t p) { return a[p]; },
                                      [&](std::uint64_t p) { return b[p]; }, s_.fast_accum);
      ++r.checked;
      r.max_error = std::max(r.max_error, e.error_ratio);
      if (!e.ok) {
        if (r.wrong == 0)
          r.detail = fmt::format("C[{},{}] = {} is outside tolerance ({:.3g}x)", rows[t], cols[t], hc[t], e.error_ratio);
        ++r.wrong;
      }
    }
    return r;
  }

  // The output copied to the host and hashed. Its config is all that decides its bits (gemm_bits_config:
  // library, GPU model, compute capability, SM count, algorithm, types), so ranks are compared only
  // within one configuration of a mixed fleet, and not with ranks whose heuristic chose another algorithm.
  OutputDigest output_digest() override {
    const auto st = ctx_.stream.get();
    auto& host = digested_;  // kept for range_digests until the next digest
    host.resize(c_.bytes());
    check(cudaMemcpyAsync(host.data(), c_.get(), host.size(), cudaMemcpyDeviceToHost, st), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(st), "cudaStreamSynchronize");
    const std::uint64_t es = dtype_size(out_type_), n = host.size() / es;
    if (const auto pick = flip_bit_due()) flip_one_bit(host.data(), n, es, *pick);
    const GemmBitsConfig config{fmt::format("cuBLASLt {}", cuda_versions().cublaslt), ctx_.name, ctx_.cc, ctx_.sm_count,
                                algo_config(algo_).dump(), lt_.types().compute_name, std::string(dtype_name(out_type_))};
    return {gemm_bits_config(config), n, block_digests(host.data(), n, es)};
  }

  std::vector<std::uint64_t> range_digests(std::uint64_t first, std::uint64_t last) override {
    const std::uint64_t es = dtype_size(out_type_);
    return range_digests_of(digested_.data(), digested_.size() / es, es, first, last);
  }

  nlohmann::json details() const override {
    auto j = algo_config(algo_);
    j["library"] = fmt::format("cuBLASLt {}", cuda_versions().cublaslt);
    j["compute_type"] = lt_.types().compute_name;
    j["reduction_scheme_mask"] = reduction_scheme_names(lt_.reduction_mask());
    j["output_dtype"] = dtype_name(out_type_);
    j["heuristic_rank"] = chosen_.heuristic_rank;
    j["algorithm_choice"] = s_.fixed_algorithm ? "fixed: the heuristic's first, no split-K (the burn-in's agreement check)"
                                               : "the fastest of the heuristic's candidates, timed";
    j["candidates"] = candidates_;
    j["workspace_bytes"] = kGemmWorkspaceBytes;
    j["products_per_timing"] = batch_;
    j["timing"] = graph_ ? "one CUDA graph launch of the batch between two events"
                         : "the batch launched on the stream between two events (graph capture failed: " + graph_error_ + ")";
    j["warmup_products"] = warmup_products_;
    j["warmup_seconds"] = warmup_seconds_;  // GPU time of the counted warm-up products (the first one aside)
    if (gemm_has_fast_accum(type_)) j["fast_accumulation"] = s_.fast_accum;
    return j;
  }

 private:
  void corrupt_if_planted() {
    if (fault_injected("wrong:gemm"))
      check(gemm_corrupt(out_type_, c_.get(), s_.m / 2 + (s_.n / 2) * s_.m, ctx_.stream.get()), "gemm_corrupt launch");
  }

  void matmul(const cublasLtMatmulAlgo_t& algo) {
    lt_matmul(ctx_.lt, lt_, algo, a_.get(), b_.get(), c_.get(), workspace_.get(), kGemmWorkspaceBytes,
              ctx_.stream.get());
  }

  // Runs the heuristic's first algorithm for kGemmWarmupSeconds of GPU time (gemm_warmup_next: the
  // first product, which loads the kernels, is not counted) so the algorithms are timed at working
  // clocks, not idle ones; if it fails, the choice records why.
  void warm_up(const cublasLtMatmulAlgo_t& algo) {
    const auto st = ctx_.stream.get();
    try {
      matmul(algo);  // lazy module loading happens here
      ctx_.stream.synchronize();
      warmup_products_ = 1;
      warmup_seconds_ = 0;
      int n = 1;
      for (int round = 0; n > 0; ++round) {
        start_.record(st);
        for (int i = 0; i < n; ++i) matmul(algo);
        stop_.record(st);
        const double dt = elapsed_seconds(start_, stop_);
        warmup_products_ += n;
        warmup_seconds_ += dt;
        n = gemm_warmup_next(warmup_seconds_, dt / n, round);
      }
    } catch (const Error&) {
      cudaGetLastError();
      warmup_products_ = 0;
    }
  }

  // The timed batch of products as one CUDA graph (captured once), so a repetition is one launch. If
  // capture fails, the repetitions launch the batch on the stream and the row says why.
  void capture_batch() {
    const auto st = ctx_.stream.get();
    cudaGraph_t g = nullptr;
    try {
      check(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
      try {
        for (int i = 0; i < batch_; ++i) matmul(algo_);
      } catch (const Error&) {
        cudaStreamEndCapture(st, &g);
        if (g) cudaGraphDestroy(g);
        throw;
      }
      check(cudaStreamEndCapture(st, &g), "cudaStreamEndCapture");
      const auto rc = cudaGraphInstantiate(&graph_, g, 0);
      cudaGraphDestroy(g);
      check(rc, "cudaGraphInstantiate");
    } catch (const Error& e) {
      cudaGetLastError();
      graph_ = nullptr;
      graph_error_ = e.what();
    }
  }

  // Times each of the heuristic's top-K algorithms after the warm-up (one product each, then the
  // median of 3 products) and keeps the fastest; an algorithm that fails is recorded and passed over.
  // A fixed algorithm (GemmShape::fixed_algorithm) is the heuristic's first, timed only to size the batch.
  void choose_algorithm() {
    const auto results = lt_.heuristic(ctx_.lt);
    if (results.empty())
      throw Error(fmt::format("cuBLASLt has no algorithm for GEMM {} {} on this GPU", format_gemm_shape(s_),
                              dtype_name(type_)),
                  kExitInvalidResult);
    warm_up(results.front().algo);
    std::vector<GemmCandidate> timed;
    const auto st = ctx_.stream.get();
    const std::size_t tried = s_.fixed_algorithm ? 1 : results.size();
    for (std::size_t i = 0; i < tried; ++i) {
      GemmCandidate c;
      c.heuristic_rank = static_cast<int>(i);
      try {
        matmul(results[i].algo);
        std::vector<double> t;
        for (int r = 0; r < 3; ++r) {
          start_.record(st);
          matmul(results[i].algo);
          stop_.record(st);
          t.push_back(elapsed_seconds(start_, stop_));
        }
        c.seconds = median_of(t);
      } catch (const Error& e) {
        c.error = e.what();
        cudaGetLastError();
      }
      timed.push_back(c);
      nlohmann::json entry = {{"heuristic_rank", i}, {"waves", results[i].wavesCount}};
      if (c.error.empty())
        entry["us"] = c.seconds * 1e6;
      else
        entry["error"] = c.error;
      entry.update(algo_config(results[i].algo));
      candidates_.push_back(entry);
    }
    const auto best = fastest_candidate(timed);
    if (!best)
      throw Error(fmt::format("every one of the {} cuBLASLt algorithms failed for GEMM {} {}: {}", timed.size(),
                              format_gemm_shape(s_), dtype_name(type_), timed.front().error),
                  kExitInvalidResult);
    chosen_ = timed[*best];
    algo_ = results[*best].algo;
    batch_ = gemm_batch(chosen_.seconds);
  }

  CudaContext& ctx_;
  DType type_, out_type_;
  GemmShape s_;
  std::uint64_t seed_;
  LtProblem lt_;
  DeviceMemory a_, b_, c_, workspace_;
  Event start_, stop_;
  cublasLtMatmulAlgo_t algo_{};
  GemmCandidate chosen_;
  nlohmann::json candidates_ = nlohmann::json::array();
  int batch_ = 1;
  int warmup_products_ = 0;
  double warmup_seconds_ = 0;
  cudaGraphExec_t graph_ = nullptr;
  std::string graph_error_;
  std::vector<unsigned char> digested_;  // the output output_digest hashed (host copy)
};

}  // namespace

std::unique_ptr<GemmProblem> make_cuda_gemm(CudaContext& ctx, DType type, const GemmShape& shape, std::uint64_t seed) {
  ScopedDevice on(ctx.ordinal);
  return std::make_unique<CudaGemm>(ctx, type, shape, seed);
}

std::optional<std::string> cuda_gemm_unsupported(CudaContext& ctx, DType type, const GemmShape& shape) {
  const LtProblem problem(type, shape);
  if (!problem.heuristic(ctx.lt).empty()) return std::nullopt;
  return fmt::format("cuBLASLt offers no algorithm for GEMM {} {} on this GPU (compute capability {})",
                     format_gemm_shape(shape), dtype_name(type), format_cc(ctx.cc));
}

}  // namespace gpuscale::cuda
