#pragma once
// The CUDA device's thin runtime layer: every CUDA or cuBLASLt call goes through check(), which turns
// a failure into one line (kernels/cuda/cuda_plan.h's call_failure) thrown as gpuscale::Error, so the
// measurement is marked failed and the run goes on; RAII owners for device and pinned memory, streams
// and events. Internal to kernels/cuda.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string_view>
#include <utility>

namespace gpuscale::cuda {

void check(cudaError_t rc, std::string_view call);
void check(cublasStatus_t rc, std::string_view call);

// Memory on one GPU. The owner frees it on that GPU.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(int ordinal, std::uint64_t bytes);
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  DeviceMemory(DeviceMemory&& o) noexcept { swap(o); }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    swap(o);
    return *this;
  }
  ~DeviceMemory();

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::uint64_t bytes() const { return bytes_; }
  int ordinal() const { return ordinal_; }

 private:
  void swap(DeviceMemory& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(ordinal_, o.ordinal_);
  }
  void* ptr_ = nullptr;
  std::uint64_t bytes_ = 0;
  int ordinal_ = 0;
};

// Page-locked host memory (cudaMallocHost), so copies run at the link's speed.
class PinnedMemory {
 public:
  PinnedMemory() = default;
  explicit PinnedMemory(std::uint64_t bytes);
  PinnedMemory(const PinnedMemory&) = delete;
  PinnedMemory& operator=(const PinnedMemory&) = delete;
  ~PinnedMemory();
  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::uint64_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::uint64_t bytes_ = 0;
};

class Stream {
 public:
  Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  cudaStream_t get() const { return s_; }
  void synchronize() const;

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s);

 private:
  cudaEvent_t e_ = nullptr;
};

// Seconds between two recorded events, after waiting for the second.
double elapsed_seconds(const Event& start, const Event& stop);

// Makes `ordinal` current for the scope, restoring the previous device after.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;
  ~ScopedDevice();

 private:
  int previous_ = 0;
};

}  // namespace gpuscale::cuda
