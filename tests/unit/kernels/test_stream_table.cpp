// kernels/stream_table (byte counts, names, inputs) and kernels/stream_verify.h (elementwise and
// reduction checks against outputs computed the way the CPU kernels compute them).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "kernels/stream_table.h"
#include "kernels/stream_verify.h"

namespace gpuscale {
namespace {

const std::map<StreamOp, std::uint64_t> kArraysTouched = {
    {StreamOp::copy, 2}, {StreamOp::scale, 2}, {StreamOp::add, 3},  {StreamOp::triad, 3},
    {StreamOp::dot, 2},  {StreamOp::read, 1},  {StreamOp::write, 1}};

TEST(StreamTable, EveryKernelIsListedOnceByName) {
  std::set<StreamOp> ops;
  std::set<std::string> names;
  for (const auto& k : kStreamKernels) {
    ops.insert(k.op);
    names.insert(std::string(k.name));
    EXPECT_EQ(&stream_spec(k.op), &k);
    // The output array is the one the formula assigns ("c[i] = a[i]"); a reduction writes none.
    EXPECT_EQ(k.output == kNoArray, k.arrays_written == 0) << k.name;
    if (k.output != kNoArray) {
      EXPECT_EQ(k.formula[0], "?abc"[k.output]) << k.name;
    }
  }
  EXPECT_EQ(ops.size(), kArraysTouched.size());
  EXPECT_EQ(names.size(), kArraysTouched.size());
}

TEST(StreamTable, ByteCountsAreArraysTimesElementsTimesSize) {
  std::mt19937_64 rng(31);
  for (const auto& [op, arrays] : kArraysTouched) {
    SCOPED_TRACE(std::string(stream_spec(op).name));
    EXPECT_EQ(static_cast<std::uint64_t>(stream_spec(op).arrays_read + stream_spec(op).arrays_written), arrays);
    for (std::uint64_t es : {1u, 2u, 4u, 8u}) {
      for (int i = 0; i < 50; ++i) {
        const std::uint64_t n = 1 + rng() % (std::uint64_t{1} << 30);
        ASSERT_EQ(stream_bytes(op, n, es), arrays * n * es) << n << " x " << es;
      }
    }
  }
  EXPECT_EQ(stream_bytes(StreamOp::triad, 1000, 8), 24000u);
  EXPECT_EQ(stream_bytes(StreamOp::copy, 1000, 4), 8000u);
  EXPECT_EQ(stream_bytes(StreamOp::write, 1000, 8), 8000u);
}

TEST(StreamTable, ByteCountsAre64Bit) {
  const std::uint64_t n = (std::uint64_t{1} << 31) + 7;  // more elements than a 32-bit int holds
  EXPECT_EQ(stream_bytes(StreamOp::copy, n, 8), 34359738480u);
  EXPECT_EQ(stream_bytes(StreamOp::scale, n, 8), 34359738480u);
  EXPECT_EQ(stream_bytes(StreamOp::add, n, 8), 51539607720u);
  EXPECT_EQ(stream_bytes(StreamOp::triad, n, 8), 51539607720u);
  EXPECT_EQ(stream_bytes(StreamOp::dot, n, 8), 34359738480u);
  EXPECT_EQ(stream_bytes(StreamOp::read, n, 8), 17179869240u);
  EXPECT_EQ(stream_bytes(StreamOp::write, n, 8), 17179869240u);
}

TEST(StreamTable, InputsAreInRangeDeterministicAndVaried) {
  std::set<double> seen;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    for (StreamArray a : {kArrayA, kArrayB, kArrayC}) {
      const double v = stream_input_value(42, a, i);
      ASSERT_GE(v, 0.5);
      ASSERT_LT(v, 1.5);
      ASSERT_EQ(v, stream_input_value(42, a, i));
      seen.insert(v);
    }
  }
  EXPECT_GT(seen.size(), 2900u);  // arrays and indices give different values
  EXPECT_NE(stream_input_value(42, kArrayA, 5), stream_input_value(43, kArrayA, 5));
}

// Output of one kernel pass, written the way kernels/cpu/cpu_stream.cpp does it.
template <typename T>
std::vector<T> run_kernel(StreamOp op, std::uint64_t n, std::uint64_t seed) {
  std::vector<T> a(n), b(n), c(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(stream_input_value(seed, kArrayA, i));
    b[i] = static_cast<T>(stream_input_value(seed, kArrayB, i));
    c[i] = static_cast<T>(stream_input_value(seed, kArrayC, i));
  }
  const T s = static_cast<T>(kStreamScalar);
  for (std::uint64_t i = 0; i < n; ++i) {
    switch (op) {
      case StreamOp::copy:
        c[i] = a[i];
        break;
      case StreamOp::scale:
        b[i] = s * c[i];
        break;
      case StreamOp::add:
        c[i] = a[i] + b[i];
        break;
      case StreamOp::triad:
        a[i] = b[i] + s * c[i];
        break;
      case StreamOp::write:
        a[i] = s;
        break;
      default:
        break;
    }
  }
  switch (op) {
    case StreamOp::scale:
      return b;
    case StreamOp::triad:
    case StreamOp::write:
      return a;
    default:
      return c;  // copy, add
  }
}

const StreamOp kElementwise[] = {StreamOp::copy, StreamOp::scale, StreamOp::add, StreamOp::triad, StreamOp::write};

template <typename T>
void check_elementwise(std::uint64_t seed_base) {
  std::mt19937_64 rng(seed_base);
  for (StreamOp op : kElementwise) {
    const std::uint64_t n = 500 + rng() % 3000, seed = rng();
    SCOPED_TRACE(testing::Message() << stream_spec(op).name << " n=" << n << " seed=" << seed);
    auto out = run_kernel<T>(op, n, seed);

    auto ok = verify_stream_elements<T>(op, out.data(), n, seed);
    EXPECT_EQ(ok.checked, n);
    EXPECT_EQ(ok.wrong, 0u) << ok.detail;
    EXPECT_TRUE(ok.detail.empty());
    EXPECT_LE(ok.max_error, 1.0);

    // One ulp off is within the tolerance (an FMA rounds once instead of twice).
    const std::uint64_t near = rng() % n;
    const T saved = out[near];
    out[near] = std::nextafter(saved, T(10));
    EXPECT_EQ(verify_stream_elements<T>(op, out.data(), n, seed).wrong, 0u);

    // One element off by 0.1% is caught, and the detail names its index.
    const std::uint64_t bad = rng() % n;
    out[near] = saved;
    out[bad] = static_cast<T>(out[bad] * T(1.001));
    auto r = verify_stream_elements<T>(op, out.data(), n, seed);
    EXPECT_EQ(r.checked, n);
    EXPECT_EQ(r.wrong, 1u);
    EXPECT_GT(r.max_error, 1.0);
    EXPECT_NE(r.detail.find("[" + std::to_string(bad) + "]"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("1 of " + std::to_string(n)), std::string::npos) << r.detail;

    // NaN is wrong, not silently skipped.
    out[bad] = std::numeric_limits<T>::quiet_NaN();
    r = verify_stream_elements<T>(op, out.data(), n, seed);
    EXPECT_EQ(r.wrong, 1u);
    EXPECT_TRUE(std::isinf(r.max_error));

    // Several wrong values: all counted, the first one named.
    out[0] = T(0);
    out[n - 1] = T(-1);
    r = verify_stream_elements<T>(op, out.data(), n, seed);
    EXPECT_EQ(r.wrong, bad == 0 || bad == n - 1 ? 2u : 3u);
    EXPECT_NE(r.detail.find("first at [0]"), std::string::npos) << r.detail;
  }
}

TEST(StreamVerify, ElementwiseFp64) { check_elementwise<double>(101); }
TEST(StreamVerify, ElementwiseFp32) { check_elementwise<float>(102); }

TEST(StreamVerify, ExpectedElementFollowsTheKernelFormulas) {
  const StreamInputs<double> in{77};
  for (std::uint64_t i : {0u, 1u, 999u}) {
    EXPECT_EQ(stream_expected_element(StreamOp::copy, in, i), in.a(i));
    EXPECT_EQ(stream_expected_element(StreamOp::scale, in, i), 0.4 * in.c(i));
    EXPECT_EQ(stream_expected_element(StreamOp::add, in, i), in.a(i) + in.b(i));
    EXPECT_EQ(stream_expected_element(StreamOp::triad, in, i), in.b(i) + 0.4 * in.c(i));
    EXPECT_EQ(stream_expected_element(StreamOp::write, in, i), 0.4);
  }
}

TEST(StreamVerify, OutputOfAnotherSeedIsWrongEverywhere) {
  const std::uint64_t n = 777;
  const auto out = run_kernel<double>(StreamOp::triad, n, 5);
  const auto r = verify_stream_elements<double>(StreamOp::triad, out.data(), n, 6);
  EXPECT_EQ(r.wrong, n);
}

// The reductions as the CPU kernels compute them (accumulated in double) and an exact reference.
template <typename T>
void check_sum(StreamOp op, std::uint64_t n, std::uint64_t seed) {
  SCOPED_TRACE(testing::Message() << stream_spec(op).name << " sizeof(T)=" << sizeof(T) << " n=" << n);
  const StreamInputs<T> in{seed};
  double kernel = 0;
  long double exact = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    const T a = static_cast<T>(stream_input_value(seed, kArrayA, i));
    const T b = static_cast<T>(stream_input_value(seed, kArrayB, i));
    ASSERT_EQ(a, in.a(i));
    kernel += op == StreamOp::dot ? static_cast<double>(a) * static_cast<double>(b) : static_cast<double>(a);
    exact +=
        op == StreamOp::dot ? static_cast<long double>(a) * static_cast<long double>(b) : static_cast<long double>(a);
  }
  const auto good = verify_stream_sum<T>(op, kernel, n, seed);
  EXPECT_EQ(good.checked, 1u);
  EXPECT_EQ(good.wrong, 0u) << good.detail;
  EXPECT_TRUE(good.detail.empty());
  EXPECT_EQ(verify_stream_sum<T>(op, static_cast<double>(exact), n, seed).wrong, 0u);

  const auto bad = verify_stream_sum<T>(op, static_cast<double>(exact) * 1.001, n, seed);
  EXPECT_EQ(bad.wrong, 1u);
  EXPECT_GT(bad.max_error, 1.0);
  EXPECT_FALSE(bad.detail.empty());
  EXPECT_EQ(verify_stream_sum<T>(op, std::nan(""), n, seed).wrong, 1u);
  // The sum of the other reduction over the same arrays is also wrong.
  const StreamOp other = op == StreamOp::dot ? StreamOp::read : StreamOp::dot;
  EXPECT_EQ(verify_stream_sum<T>(other, kernel, n, seed).wrong, 1u);
}

TEST(StreamVerify, Sums) {
  std::mt19937_64 rng(41);
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t n = 1000 + rng() % 20000, seed = rng();
    check_sum<double>(StreamOp::dot, n, seed);
    check_sum<double>(StreamOp::read, n, seed);
    check_sum<float>(StreamOp::dot, n, seed);
    check_sum<float>(StreamOp::read, n, seed);
  }
}

}  // namespace
}  // namespace gpuscale
