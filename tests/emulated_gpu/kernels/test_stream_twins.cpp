// The STREAM kernels' twins against the formulas of kernels/stream_table.h, computed here on the host
// from the same random inputs, at launch shapes the CUDA device uses (256 threads, a grid of SMs x
// resident blocks) and at a small grid that sends each thread through the unrolled loop many times.
// Sizes are odd, so the scalar tails after the 16-byte vectors run too.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/stream_table.h"
#include "tests/emulated_gpu/kernels/twin_test_support.h"

// The functors binary_kernel takes are arguments of a launch: their types come from the device code.
#include "tests/emulated_gpu/kernels/host_cuda_compat.h"

#include "kernels/cuda/stream_kernels_device.cuh"

namespace gpuscale_emu::test {
namespace {

using gpuscale::kStreamScalar;
using gpuscale::StreamOp;

template <typename T>
std::string type_name() {
  return sizeof(T) == 4 ? "float" : "double";
}

template <typename T>
std::string binary(const std::string& functor) {
  const std::string t = type_name<T>(), f = "gpuscale::cuda::device_code::" + functor + "<" + t + ">";
  return "void gpuscale::cuda::device_code::binary_kernel<" + t + ", " + f + " >(" + t + "*, " + t + " const*, " + t +
         " const*, unsigned long, " + f + ")";
}

template <typename T>
class StreamTwins : public testing::Test {
 protected:
  static constexpr std::uint64_t kSeed = 0x5eed0001;
  // Values in [0.5, 1.5), two units of roundoff of the result's type.
  static double tolerance(double expected) { return 2 * std::numeric_limits<T>::epsilon() * std::abs(expected); }

  void init(std::uint64_t n, const LaunchShape& s) {
    a.assign(n, T(-1));
    b.assign(n, T(-1));
    c.assign(n, T(-1));
    T* pa = a.data();
    T* pb = b.data();
    T* pc = c.data();
    std::uint64_t seed = kSeed;
    const std::string t = type_name<T>();
    launch(twin("void gpuscale::cuda::device_code::init_kernel<" + t + ">(" + t + "*, " + t + "*, " + t +
                "*, unsigned long, unsigned long)"),
           s, &pa, &pb, &pc, &n, &seed);
  }
  static T input(gpuscale::StreamArray array, std::uint64_t i) {
    return static_cast<T>(gpuscale::stream_input_value(kSeed, array, i));
  }

  std::vector<T> a, b, c;
};

using Types = testing::Types<float, double>;
TYPED_TEST_SUITE(StreamTwins, Types);

const LaunchShape kShapes[] = {shape(132 * 2, 256), shape(3, 256), shape(1, 32)};
const std::uint64_t kSizes[] = {100003, 4099, 7};

TYPED_TEST(StreamTwins, InitFillsEveryArrayWithItsInputs) {
  for (const LaunchShape& s : kShapes)
    for (std::uint64_t n : kSizes) {
      this->init(n, s);
      for (std::uint64_t i = 0; i < n; ++i) {
        ASSERT_EQ(this->a[i], this->input(gpuscale::kArrayA, i)) << i;
        ASSERT_EQ(this->b[i], this->input(gpuscale::kArrayB, i)) << i;
        ASSERT_EQ(this->c[i], this->input(gpuscale::kArrayC, i)) << i;
      }
    }
}

// copy: c = a; scale: b = s c; add: c = a + b; triad: a = b + s c, run in STREAM's order, each
// checked against its formula on the values its inputs held.
TYPED_TEST(StreamTwins, CopyScaleAddTriadComputeTheirFormulas) {
  using T = TypeParam;
  const T s = static_cast<T>(kStreamScalar);
  for (const LaunchShape& shape_ : kShapes)
    for (std::uint64_t n : kSizes) {
      this->init(n, shape_);
      T* pa = this->a.data();
      T* pb = this->b.data();
      T* pc = this->c.data();
      T* none = nullptr;
      auto copy = gpuscale::cuda::device_code::Copy<T>{};
      launch(twin(binary<T>("Copy")), shape_, &pc, &pa, &none, &n, &copy);
      for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(this->c[i], this->input(gpuscale::kArrayA, i)) << i;
      auto scale = gpuscale::cuda::device_code::Scale<T>{s};
      launch(twin(binary<T>("Scale")), shape_, &pb, &pc, &none, &n, &scale);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double want = static_cast<double>(s) * static_cast<double>(this->input(gpuscale::kArrayA, i));
        ASSERT_NEAR(this->b[i], want, this->tolerance(want)) << i;
      }
      auto add = gpuscale::cuda::device_code::Add<T>{};
      launch(twin(binary<T>("Add")), shape_, &pc, &pa, &pb, &n, &add);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double want = static_cast<double>(this->a[i]) + static_cast<double>(this->b[i]);
        ASSERT_NEAR(this->c[i], want, this->tolerance(want)) << i;
      }
      const std::vector<T> b_before = this->b, c_before = this->c;
      auto triad = gpuscale::cuda::device_code::Triad<T>{s};
      launch(twin(binary<T>("Triad")), shape_, &pa, &pb, &pc, &n, &triad);
      for (std::uint64_t i = 0; i < n; ++i) {
        const double want = static_cast<double>(b_before[i]) + static_cast<double>(s) * static_cast<double>(c_before[i]);
        ASSERT_NEAR(this->a[i], want, this->tolerance(want)) << i;
      }
    }
}

TYPED_TEST(StreamTwins, WriteStoresTheScalarEverywhere) {
  using T = TypeParam;
  const std::string t = type_name<T>();
  for (const LaunchShape& s : kShapes)
    for (std::uint64_t n : kSizes) {
      std::vector<T> out(n + 1, T(-1));  // one past the end: must stay untouched
      T* p = out.data();
      T value = static_cast<T>(kStreamScalar);
      launch(twin("void gpuscale::cuda::device_code::write_kernel<" + t + ">(" + t + "*, unsigned long, " + t + ")"), s, &p,
             &n, &value);
      for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], value) << i;
      EXPECT_EQ(out[n], T(-1));
    }
}

// The block each element's term goes to: vector v to thread v mod stride, the scalar tail's element j
// to thread (j - nv W) mod stride; a thread's block is its index over the block size.
std::uint64_t block_of(std::uint64_t i, std::uint64_t n, int width, const LaunchShape& s) {
  const std::uint64_t nv = n / width, stride = std::uint64_t{s.grid[0]} * s.block[0];
  const std::uint64_t thread = i < nv * width ? (i / width) % stride : (i - nv * width) % stride;
  return thread / s.block[0];
}

// dot (sum a b) and read (sum a): each block's partial against a long double sum of its own elements,
// so a term in the wrong block or a missing one fails even where the total would hide it.
TYPED_TEST(StreamTwins, DotAndReadPartialsHoldEachBlocksTerms) {
  using T = TypeParam;
  const std::string t = type_name<T>();
  const int width = sizeof(T) == 4 ? 4 : 2;
  const auto* sum = twin("void gpuscale::cuda::device_code::sum_kernel<" + t + ">(" + t + " const*, " + t +
                         " const*, unsigned long, double*)");
  for (const LaunchShape& s : kShapes)
    for (std::uint64_t n : kSizes)
      for (bool dot : {true, false}) {
        this->init(n, s);
        const T* x = this->a.data();
        const T* y = dot ? this->b.data() : nullptr;
        std::vector<double> partials(s.grid[0], -1.0);
        double* pp = partials.data();
        launch(sum, s, &x, &y, &n, &pp);
        std::vector<long double> want(s.grid[0], 0.0L);
        for (std::uint64_t i = 0; i < n; ++i)
          want[block_of(i, n, width, s)] += static_cast<long double>(x[i]) * (dot ? static_cast<long double>(y[i]) : 1.0L);
        for (unsigned blk = 0; blk < s.grid[0]; ++blk) {
          const double w = static_cast<double>(want[blk]);
          // Every term is positive and a block adds at most its share of them plus its tree (the
          // classic bound: terms x unit roundoff x the sum); one term missing or misplaced is >= 0.25.
          const double terms = static_cast<double>(n / s.grid[0] + 64);
          ASSERT_NEAR(partials[blk], w, terms * std::numeric_limits<double>::epsilon() * w) << "block " << blk << " n " << n;
        }
      }
}

TEST(StreamTwinsCost, BytesAreBabelStreamsCounts) {
  std::uint64_t n = 1000;
  float* p = nullptr;
  const float* cp = nullptr;
  float* none = nullptr;
  const float* cnone = nullptr;
  const float* some = reinterpret_cast<const float*>(&n);  // any non-null: only its presence counts
  std::uint64_t seed = 1;
  const LaunchShape s = shape(10, 256);
  auto copy = gpuscale::cuda::device_code::Copy<float>{};
  auto triad = gpuscale::cuda::device_code::Triad<float>{0.4f};
  EXPECT_EQ(bytes(twin(binary<float>("Copy")), s, &p, &cp, &none, &n, &copy), 2 * 1000 * 4);
  EXPECT_EQ(bytes(twin(binary<float>("Triad")), s, &p, &cp, &some, &n, &triad), 3 * 1000 * 4);
  EXPECT_EQ(bytes(twin("void gpuscale::cuda::device_code::init_kernel<float>(float*, float*, float*, unsigned long, "
                       "unsigned long)"), s, &p, &p, &p, &n, &seed), 3 * 1000 * 4);
  double* partials = nullptr;
  const auto* sum = twin("void gpuscale::cuda::device_code::sum_kernel<float>(float const*, float const*, unsigned "
                         "long, double*)");
  EXPECT_EQ(bytes(sum, s, &cp, &some, &n, &partials), 2 * 1000 * 4 + 10 * 8);  // dot
  EXPECT_EQ(bytes(sum, s, &cp, &cnone, &n, &partials), 1000 * 4 + 10 * 8);     // read
}

}  // namespace
}  // namespace gpuscale_emu::test
