#include "kernels/cuda/cuda_util.h"

#include "core/error.h"
#include "kernels/cuda/cuda_plan.h"

namespace gpuscale::cuda {

void check(cudaError_t rc, std::string_view call) {
  if (rc == cudaSuccess) return;
  throw Error(call_failure(call, cudaGetErrorString(rc), cudaGetErrorName(rc)), kExitInvalidResult);
}

void check(cublasStatus_t rc, std::string_view call) {
  if (rc == CUBLAS_STATUS_SUCCESS) return;
  throw Error(call_failure(call, cublasLtGetStatusString(rc), cublasLtGetStatusName(rc)), kExitInvalidResult);
}

DeviceMemory::DeviceMemory(int ordinal, std::uint64_t bytes) : bytes_(bytes), ordinal_(ordinal) {
  ScopedDevice on(ordinal);
  check(cudaMalloc(&ptr_, bytes == 0 ? 16 : bytes), "cudaMalloc");
}

DeviceMemory::~DeviceMemory() {
  if (ptr_ == nullptr) return;
  int previous = 0;
  cudaGetDevice(&previous);
  cudaSetDevice(ordinal_);
  cudaFree(ptr_);  // errors here would be a corrupted context; nothing useful to report from a destructor
  cudaSetDevice(previous);
}

PinnedMemory::PinnedMemory(std::uint64_t bytes) : bytes_(bytes) {
  check(cudaMallocHost(&ptr_, bytes == 0 ? 16 : bytes), "cudaMallocHost");
}

PinnedMemory::~PinnedMemory() {
  if (ptr_ != nullptr) cudaFreeHost(ptr_);
}

Stream::Stream() { check(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
Stream::~Stream() {
  if (s_ != nullptr) cudaStreamDestroy(s_);
}
void Stream::synchronize() const { check(cudaStreamSynchronize(s_), "cudaStreamSynchronize"); }

Event::Event() { check(cudaEventCreate(&e_), "cudaEventCreate"); }
Event::~Event() {
  if (e_ != nullptr) cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) { check(cudaEventRecord(e_, s), "cudaEventRecord"); }

double elapsed_seconds(const Event& start, const Event& stop) {
  check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

ScopedDevice::ScopedDevice(int ordinal) {
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != ordinal) check(cudaSetDevice(ordinal), "cudaSetDevice");
}

ScopedDevice::~ScopedDevice() { cudaSetDevice(previous_); }

}  // namespace gpuscale::cuda
