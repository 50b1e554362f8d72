#include "harness/benchmarks/burn/burn_work.h"

#include <algorithm>
#include <cmath>

#include "kernels/gemm_spec.h"

namespace gpuscale {

BurnWork burn_work(const PlanContext& ctx) {
  const bool cuda = ctx.backend == "cuda";
  BurnWork w;
  const auto types = ctx.device.gemm_dtypes();
  DType gemm = types.empty() ? DType::fp64 : types.front();
  if (cuda && std::find(types.begin(), types.end(), DType::bf16) != types.end()) gemm = DType::bf16;
  for (DType t : ctx.opts.dtypes)
    if (dtype_used_by(t, kForGemm) && std::find(types.begin(), types.end(), t) != types.end()) {
      gemm = t;  // the first GEMM type --dtypes names
      break;
    }
  w.gemm_dtype = gemm;
  w.gemm_n = cuda ? (ctx.opts.quick ? 4096 : 8192) : (ctx.opts.quick ? 512 : 1024);
  // STREAM's default arrays on a GPU; on the CPU backend at most 256 MiB (4x a large last-level cache),
  // since every rank of the node holds three and refills them at each window's start.
  std::uint64_t array = ctx.opts.quick ? (64ULL << 20) : ctx.device.default_stream_array_bytes();
  if (!cuda) array = std::min<std::uint64_t>(array, 256ULL << 20);
  array = ctx.opts.array_bytes.value_or(array);
  w.stream_elements = std::max<std::uint64_t>(1, array / dtype_size(w.stream_dtype));
  w.all_reduce_bytes = ctx.opts.max_bytes.value_or(cuda ? (ctx.opts.quick ? (32ULL << 20) : (256ULL << 20))
                                                        : (ctx.opts.quick ? (1ULL << 20) : (8ULL << 20)));
  return w;
}

GemmShape burn_gemm_shape(DType type, std::uint64_t n) {
  GemmShape shape = gemm_shape_for(type, GemmShape{n, n, n, false, false});
  shape.fixed_algorithm = true;
  return shape;
}

int all_reduce_batch(double slice_s, const std::function<double(int)>& timed, const std::function<double(double)>& slowest) {
  (void)timed(1);  // untimed: the transport connects lazily on its first operation
  const double first = slowest(timed(1));
  return static_cast<int>(std::clamp(std::floor(slice_s / 10 / std::max(first, 1e-9)), 1.0, 1e5));
}

}  // namespace gpuscale
