#pragma once
// What g++ needs to compile the project's device-code headers (kernels/cuda/*_device.cuh and the like)
// for the host, so the emulated GPU runs the very source nvcc compiles (tests only).
//
// Without nvcc, the CUDA headers already give the host what they can: crt/host_defines.h defines
// __host__, __device__, __global__, __shared__ and __forceinline__ for a host compiler (__annotate__ is
// empty when __CUDACC__ is not defined), vector_types.h defines float4, double2, uint4, uint3 and dim3,
// and cuda_fp16.h, cuda_bf16.h and cuda_fp8.h have host paths for their types and conversions. What
// they do not give is the execution model: the index variables (CUDA C Programming Guide, "Built-in
// Variables") and the atomics ("Atomic Functions"). The twin runner runs a launch's threads one at a
// time on one host thread, so the index variables are that thread's, and an atomic is a plain
// read-modify-write: no other thread runs between its read and its write.
//
// Block synchronisation cannot be had this way (a thread would have to stop at __syncthreads while the
// others of its block run), so __syncthreads and the warp shuffles stop the process: a kernel that uses
// them needs a hand-written twin (sum_kernel: stream_sum_twin.cpp), and one reaching these means its
// table entry is wrong.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#if defined(__CUDACC__)
#error "host_cuda_compat.h is for the host compiler: nvcc has the real execution model"
#endif

// The launch's current thread, set by the runner (kernel_runner.h) before it calls the kernel.
inline thread_local uint3 threadIdx;
inline thread_local uint3 blockIdx;
inline thread_local dim3 blockDim;
inline thread_local dim3 gridDim;

// atomicAdd and atomicMin return the old value, as CUDA's do.
template <typename T>
inline T atomicAdd(T* address, T value) {
  const T old = *address;
  *address = old + value;
  return old;
}
template <typename T>
inline T atomicMin(T* address, T value) {
  const T old = *address;
  if (value < old) *address = value;
  return old;
}

[[noreturn]] inline void gpuscale_emu_needs_hand_twin(const char* what) {
  std::fprintf(stderr, "emulated GPU: %s reached in a host-compiled kernel; it needs a hand-written twin\n", what);
  std::abort();
}
inline void __syncthreads() { gpuscale_emu_needs_hand_twin("__syncthreads"); }
template <typename T>
inline T __shfl_down_sync(unsigned, T, unsigned, int = 32) {
  gpuscale_emu_needs_hand_twin("__shfl_down_sync");
}
