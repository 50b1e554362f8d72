#include "tests/emulated_gpu/cublaslt/lt_product_cache.h"

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "tests/emulated_gpu/cublaslt/lt_objects.h"

namespace gpuscale_emu::lt {
namespace {

// A fast 64-bit hash of 8-byte words (the contents only need to be told apart from other contents
// this process produced, not from an adversary).
struct Hasher {
  std::uint64_t h = 0x9e3779b97f4a7c15ull;
  void mix(std::uint64_t w) {
    h ^= w;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      std::uint64_t w;
      std::memcpy(&w, c + i, 8);
      mix(w);
    }
    std::uint64_t tail = 0;
    std::memcpy(&tail, c + i, n - i);
    mix(tail ^ (static_cast<std::uint64_t>(n - i) << 56));
  }
};

// The stored elements of a rows x cols (x batch) matrix, column by column, padding left out.
std::uint64_t matrix_hash(const MatrixRef& m, std::uint64_t rows, std::uint64_t cols, int batch) {
  Hasher h;
  const std::uint64_t es = element_bytes(m.type);
  const auto* base = static_cast<const char*>(m.data);
  for (int b = 0; b < batch; ++b)
    for (std::uint64_t j = 0; j < cols; ++j)
      h.bytes(base + (static_cast<std::int64_t>(b) * m.batch_stride + static_cast<std::int64_t>(j) * m.ld) *
                         static_cast<std::int64_t>(es),
              rows * es);
  return h.h;
}

template <typename T>
void append(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void append(std::string& key, const MatrixRef& m) {
  append(key, m.data);
  append(key, m.type);
  append(key, m.ld);
  append(key, m.batch_stride);
}

std::mutex g_mutex;
std::unordered_map<std::string, std::uint64_t> g_results;  // product -> hash of the D it left
ProductCacheCounts g_counts;
constexpr std::size_t kMaxEntries = 4096;

}  // namespace

void compute_product_once(const ProductSpec& s, std::uint64_t after_tag, const std::function<void()>& after) {
  std::string key;
  append(key, after_tag);
  append(key, s.acc);
  append(key, s.rounding);
  append(key, s.scale_type);
  append(key, s.trans_a);
  append(key, s.trans_b);
  append(key, s.m);
  append(key, s.n);
  append(key, s.k);
  append(key, s.batch);
  for (const MatrixRef* m : {&s.a, &s.b, &s.c, &s.d}) append(key, *m);
  for (double v : {s.alpha, s.beta}) append(key, v);
  for (float v : {s.scale_a, s.scale_b, s.scale_c, s.scale_d}) append(key, v);
  append(key, matrix_hash(s.a, s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.batch));
  append(key, matrix_hash(s.b, s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.batch));
  if (s.beta != 0) append(key, matrix_hash(s.c, s.m, s.n, s.batch));

  std::lock_guard lock(g_mutex);
  if (auto it = g_results.find(key); it != g_results.end() && it->second == matrix_hash(s.d, s.m, s.n, s.batch)) {
    ++g_counts.skipped;
    return;
  }
  compute_product(s);
  if (after) after();
  ++g_counts.computed;
  if (g_results.size() >= kMaxEntries) g_results.clear();
  g_results[key] = matrix_hash(s.d, s.m, s.n, s.batch);
}

ProductCacheCounts product_cache_counts() {
  std::lock_guard lock(g_mutex);
  return g_counts;
}

}  // namespace gpuscale_emu::lt
