// The copy benchmarks', GEMM's and the dp-step's kernels' twins against their input formulas
// (kernels/copy_table.h, kernels/gemm_spec.h, training/dp_inputs.h) computed here on the host.
#include <cmath>
#include <cstdint>
#include <vector>

#include <cuda_fp16.h>

#include "kernels/copy_table.h"
#include "kernels/cuda/gemm_kernels.cuh"
#include "kernels/gemm_spec.h"
#include "tests/emulated_gpu/kernels/twin_test_support.h"

// The functors binary_kernel takes are arguments of a launch: their types come from the device code.
#include "tests/emulated_gpu/kernels/host_cuda_compat.h"

#include "kernels/cuda/stream_kernels_device.cuh"
#include "training/dp_inputs.h"

namespace gpuscale_emu::test {
namespace {

constexpr char kCopyFill[] = "gpuscale::cuda::device_code::fill_kernel(unsigned int*, unsigned long, unsigned long)";
constexpr char kCopyCount[] =
    "gpuscale::cuda::device_code::count_kernel(unsigned int const*, unsigned long, unsigned long, unsigned long long*)";

TEST(CopyTwins, FillWritesCopyWordsAndCountFindsEveryWrongWord) {
  for (const LaunchShape& s : {shape(132 * 4, 256), shape(2, 256)}) {
    std::uint64_t n = 65537, seed = 0xc0b1;
    std::vector<std::uint32_t> words(n, 0);
    std::uint32_t* p = words.data();
    launch(twin(kCopyFill), s, &p, &n, &seed);
    for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(words[i], gpuscale::copy_word(seed, i)) << i;

    unsigned long long counts[2] = {0, ~0ULL};
    unsigned long long* pc = counts;
    const std::uint32_t* cp = words.data();
    launch(twin(kCopyCount), s, &cp, &n, &seed, &pc);
    EXPECT_EQ(counts[0], 0u);
    EXPECT_EQ(counts[1], ~0ULL);
    words[40000] ^= 1;
    words[n - 1] ^= 0x80000000u;
    words[7] += 1;
    launch(twin(kCopyCount), s, &cp, &n, &seed, &pc);
    EXPECT_EQ(counts[0], 3u);
    EXPECT_EQ(counts[1], 7u);
  }
}

TEST(CopyTwins, CopyWordsCopiesEveryWordIncludingTheTail) {
  std::uint64_t n = 1027;  // 256 vectors of 4 words and a tail of 3
  std::vector<std::uint32_t> src(n), dst(n + 1, 0);
  for (std::uint64_t i = 0; i < n; ++i) src[i] = gpuscale::copy_word(99, i);
  std::uint32_t* d = dst.data();
  const std::uint32_t* sp = src.data();
  const std::uint32_t* none = nullptr;
  auto copy = gpuscale::cuda::device_code::Copy<std::uint32_t>{};
  launch(twin("void gpuscale::cuda::device_code::binary_kernel<unsigned int, "
              "gpuscale::cuda::device_code::Copy<unsigned int> >(unsigned int*, unsigned int const*, unsigned int const*, "
              "unsigned long, gpuscale::cuda::device_code::Copy<unsigned int>)"),
         shape(5, 256), &d, &sp, &none, &n, &copy);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(dst[i], src[i]) << i;
  EXPECT_EQ(dst[n], 0u);
}

TEST(GemmTwins, FillRoundsGemmInputsToEachType) {
  std::uint64_t n = 4097, seed = 0x6e;
  gpuscale::GemmMatrix which = gpuscale::kMatrixB;
  const LaunchShape s = shape(132, 256);
  std::vector<float> f(n);
  float* pf = f.data();
  bool integer = false;
  launch(twin("void gpuscale::cuda::device_code::fill_kernel<float>(float*, unsigned long, unsigned long, "
              "gpuscale::GemmMatrix, bool)"), s, &pf, &n, &seed, &which, &integer);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(f[i], static_cast<float>(gpuscale::gemm_input_value(seed, which, i, false)));

  std::vector<std::int8_t> q(n);
  std::int8_t* pq = q.data();
  integer = true;
  launch(twin("void gpuscale::cuda::device_code::fill_kernel<signed char>(signed char*, unsigned long, unsigned long, "
              "gpuscale::GemmMatrix, bool)"), s, &pq, &n, &seed, &which, &integer);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(q[i], gpuscale::gemm_input_value(seed, which, i, true)) << i;

  // fp16: 11 significant bits, so within half a unit in the last place (2^-11 relative) of the value.
  std::vector<__half> h(n);
  __half* ph = h.data();
  integer = false;
  launch(twin("void gpuscale::cuda::device_code::fill_kernel<__half>(__half*, unsigned long, unsigned long, "
              "gpuscale::GemmMatrix, bool)"), s, &ph, &n, &seed, &which, &integer);
  for (std::uint64_t i = 0; i < n; ++i) {
    const double want = gpuscale::gemm_input_value(seed, which, i, false);
    ASSERT_NEAR(__half2float(h[i]), want, std::ldexp(std::abs(want), -11) + std::ldexp(1.0, -25)) << i;
  }
}

// gather: rows of op(A), columns of op(B) and entries of C, column-major, with and without transposes.
TEST(GemmTwins, GatherReadsTheSampledRowsColumnsAndEntries) {
  const std::uint64_t m = 5, n = 3, k = 4;
  std::vector<float> a(m * k), b(k * n);
  std::vector<double> c(m * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(gpuscale::gemm_input_value(1, gpuscale::kMatrixA, i, false));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(gpuscale::gemm_input_value(1, gpuscale::kMatrixB, i, false));
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = 100.0 + static_cast<double>(i);
  const std::vector<std::uint64_t> rows = {0, 4, 2}, cols = {2, 0, 1};
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      std::vector<double> a_out(rows.size() * k, -1), b_out(rows.size() * k, -1), c_out(rows.size(), -1);
      gpuscale::cuda::GemmGather g{gpuscale::DType::fp32, gpuscale::DType::fp64, m, n, k, ta, tb, a.data(), b.data(),
                                   c.data(), rows.data(), cols.data(), static_cast<int>(rows.size()), a_out.data(),
                                   b_out.data(), c_out.data()};
      launch(twin("void gpuscale::cuda::device_code::gather_kernel<float, double>(gpuscale::cuda::GemmGather)"),
             shape(2, 4), &g);
      for (std::size_t s = 0; s < rows.size(); ++s) {
        const std::uint64_t i = rows[s], j = cols[s];
        for (std::uint64_t p = 0; p < k; ++p) {
          // op(A)[i][p]: A stored m x k (lda m), or k x m (lda k) when transposed; op(B)[p][j] likewise.
          EXPECT_EQ(a_out[s * k + p], ta ? a[p + i * k] : a[i + p * m]);
          EXPECT_EQ(b_out[s * k + p], tb ? b[j + p * n] : b[p + j * k]);
        }
        EXPECT_EQ(c_out[s], c[i + j * m]);
      }
    }
}

TEST(GemmTwins, CorruptAddsOneToTheEntry) {
  std::vector<double> c = {1.0, 2.0, 3.0};
  double* p = c.data();
  std::uint64_t index = 1;
  launch(twin("void gpuscale::cuda::device_code::corrupt_kernel<double>(double*, unsigned long)"), shape(1, 1), &p, &index);
  EXPECT_EQ(c, (std::vector<double>{1.0, 3.0, 3.0}));
}

TEST(DpTwins, FillWritesDpInputs) {
  std::uint64_t n = 30001, seed = 0xd9;
  gpuscale::DpInput which = gpuscale::DpInput::weight;
  int id = 3;
  double scale = 0.05;
  std::vector<double> w(n);
  double* pw = w.data();
  launch(twin("void gpuscale::cuda::device_code::dp_fill_kernel<double>(double*, unsigned long, unsigned long, "
              "gpuscale::DpInput, int, double)"), shape(132, 256), &pw, &n, &seed, &which, &id, &scale);
  for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(w[i], gpuscale::dp_input_value(seed, which, id, i, scale)) << i;
}

}  // namespace
}  // namespace gpuscale_emu::test
