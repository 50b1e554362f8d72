#include "tests/emulated_gpu/cublaslt/lt_product_cache.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include <openssl/evp.h>

#include "tests/emulated_gpu/core/emu_core.h"
#include "tests/emulated_gpu/cublaslt/lt_objects.h"

namespace gpuscale_emu::lt {
namespace {

template <typename T>
void append(std::string& key, const T& v) {
  key.append(reinterpret_cast<const char*>(&v), sizeof v);
}

void append(std::string& key, const MatrixRef& m, bool with_pointer) {
  if (with_pointer) append(key, m.data);
  append(key, m.type);
  append(key, m.ld);
  append(key, m.batch_stride);
}

// Everything but the memory that decides D: sizes, types, layouts, scalars, scales and the flip.
std::string spec_key(const ProductSpec& s, std::uint64_t after_tag, bool with_pointers) {
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
  append(key, s.k_parts);
  for (const MatrixRef* m : {&s.a, &s.b, &s.c, &s.d}) append(key, *m, with_pointers);
  for (double v : {s.alpha, s.beta}) append(key, v);
  for (float v : {s.scale_a, s.scale_b, s.scale_c, s.scale_d}) append(key, v);
  return key;
}

// The bytes a column-major matrix of `rows` x `cols` per batch member spans in memory.
WriteRange span(const MatrixRef& m, std::uint64_t rows, std::uint64_t cols, int batch) {
  if (m.data == nullptr || rows == 0 || cols == 0) return {};
  const std::uint64_t elems = static_cast<std::uint64_t>(batch - 1) * static_cast<std::uint64_t>(m.batch_stride) +
                              (cols - 1) * static_cast<std::uint64_t>(m.ld) + rows;
  return {m.data, static_cast<std::size_t>(elems * element_bytes(m.type))};
}

bool overlap(const WriteRange& a, const WriteRange& b) {
  const auto al = reinterpret_cast<std::uintptr_t>(a.data), bl = reinterpret_cast<std::uintptr_t>(b.data);
  return a.bytes != 0 && b.bytes != 0 && al < bl + b.bytes && bl < al + a.bytes;
}

// SHA-256 of the inputs' bytes, appended to `key` (OpenSSL's EVP digest interface).
void append_digest(std::string& key, const std::vector<WriteRange>& inputs) {
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  bool ok = ctx && EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr) == 1;
  for (const WriteRange& r : inputs) {
    append(key, r.bytes);
    ok = ok && (r.bytes == 0 || EVP_DigestUpdate(ctx.get(), r.data, r.bytes) == 1);
  }
  ok = ok && EVP_DigestFinal_ex(ctx.get(), md, &len) == 1;
  if (!ok) throw std::runtime_error("emulated cuBLASLt: SHA-256 of a product's inputs failed");
  key.append(reinterpret_cast<const char*>(md), len);
}

using Copy = std::shared_ptr<const std::vector<std::byte>>;

struct Entry {
  std::uint64_t epoch = 0;         // the write count right after D was written
  std::vector<WriteRange> inputs;  // what the product read
  Copy d_copy;                     // D as written, when kept
};

std::mutex g_mutex;
std::unordered_map<std::string, Entry> g_entries;  // by pointers
std::unordered_map<std::string, Copy> g_by_content;  // by the inputs' digest
ProductCacheCounts g_counts;
std::size_t g_copy_bytes = 0;
constexpr std::size_t kMaxEntries = 4096;
// D copies kept per process: the dp-step's twelve products at its default 8192 width are 12 x 128 MiB
// in bf16; 8 ranks of --quick's 4096 width keep 8 x 384 MiB, inside this machine's memory.
constexpr std::size_t kCopyBudget = std::size_t{2} << 30;

void forget_all() {
  g_entries.clear();
  g_by_content.clear();
  g_copy_bytes = 0;
}

void give_back(const WriteRange& d, const Copy& copy, Entry& e, std::vector<WriteRange> inputs) {
  std::memcpy(const_cast<void*>(d.data), copy->data(), d.bytes);
  note_device_write(d.data, d.bytes);
  e.epoch = device_write_epoch();
  e.inputs = std::move(inputs);
  e.d_copy = copy;
  ++g_counts.restored;
}

}  // namespace

void compute_product_once(const ProductSpec& s, std::uint64_t after_tag, const std::function<void()>& after) {
  const WriteRange d = span(s.d, s.m, s.n, s.batch);
  std::vector<WriteRange> inputs = {s.trans_a ? span(s.a, s.k, s.m, s.batch) : span(s.a, s.m, s.k, s.batch),
                                    s.trans_b ? span(s.b, s.n, s.k, s.batch) : span(s.b, s.k, s.n, s.batch)};
  if (s.beta != 0) inputs.push_back(span(s.c, s.m, s.n, s.batch));  // with beta zero C is not read
  bool in_place = false;  // a product that reads what it writes gives another result when repeated
  for (const auto& r : inputs) in_place = in_place || overlap(r, d);
  const bool packed = s.d.ld == static_cast<std::int64_t>(s.m) &&
                      (s.batch == 1 || s.d.batch_stride == static_cast<std::int64_t>(s.m * s.n));
  const std::string key = spec_key(s, after_tag, true);

  std::lock_guard lock(g_mutex);
  Entry* e = nullptr;
  if (!in_place) {
    if (g_entries.size() >= kMaxEntries) forget_all();
    e = &g_entries[key];
    if (e->epoch != 0 && unwritten_since(e->epoch, e->inputs)) {
      if (unwritten_since(e->epoch, {d})) {
        ++g_counts.skipped;
        return;
      }
      if (e->d_copy) {
        give_back(d, e->d_copy, *e, std::move(inputs));
        return;
      }
    }
  }
  std::string content;
  if (e && packed) {
    content = spec_key(s, after_tag, false);
    append_digest(content, inputs);
    if (auto it = g_by_content.find(content); it != g_by_content.end()) {
      give_back(d, it->second, *e, std::move(inputs));
      return;
    }
  }
  compute_product(s);
  if (after) after();
  ++g_counts.computed;
  note_device_write(d.data, d.bytes);  // D was written: a product reading it must see that
  if (!e) return;
  e->epoch = device_write_epoch();
  e->inputs = std::move(inputs);
  e->d_copy.reset();
  if (packed && g_copy_bytes + d.bytes <= kCopyBudget) {
    const auto* p = static_cast<const std::byte*>(d.data);
    e->d_copy = std::make_shared<const std::vector<std::byte>>(p, p + d.bytes);
    g_by_content[content] = e->d_copy;
    g_copy_bytes += d.bytes;
  }
}

ProductCacheCounts product_cache_counts() {
  std::lock_guard lock(g_mutex);
  return g_counts;
}

}  // namespace gpuscale_emu::lt
