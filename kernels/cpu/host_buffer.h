#pragma once
// Page-aligned host memory that is first touched by the OpenMP threads that will use it (so pages
// land on their NUMA nodes) and asks for transparent huge pages.
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include <fmt/format.h>

#include "core/error.h"

namespace gpuscale {

template <typename T>
class HostBuffer {
 public:
  HostBuffer() = default;
  explicit HostBuffer(std::uint64_t count) : count_(count) {
    constexpr std::uint64_t kAlign = 2ULL << 20;
    std::uint64_t bytes = ((count * sizeof(T) + kAlign - 1) / kAlign) * kAlign;
    if (bytes == 0) bytes = kAlign;
    data_ = static_cast<T*>(std::aligned_alloc(kAlign, bytes));
    if (data_ == nullptr)
      throw Error(fmt::format("cannot allocate {} bytes of host memory", bytes), 1);
    madvise(data_, bytes, MADV_HUGEPAGE);  // a hint; failure is harmless
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer(HostBuffer&& o) noexcept : data_(o.data_), count_(o.count_) { o.data_ = nullptr; o.count_ = 0; }
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_;
      count_ = o.count_;
      o.data_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }
  ~HostBuffer() { std::free(data_); }

  T* data() { return data_; }
  const T* data() const { return data_; }
  std::uint64_t size() const { return count_; }
  T& operator[](std::uint64_t i) { return data_[i]; }
  const T& operator[](std::uint64_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  std::uint64_t count_ = 0;
};

}  // namespace gpuscale
