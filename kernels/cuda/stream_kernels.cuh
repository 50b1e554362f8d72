#pragma once
// Launchers for the CUDA STREAM kernels (kernels/stream_table.h defines what each computes).
// Accesses are 16-byte vectors (float4 / double2), coalesced, grid-stride; the grid is sized from the
// device (SM count x resident blocks per SM).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/stream_table.h"

namespace gpuscale::cuda {

struct StreamLaunch {
  int blocks;
  int threads;
};

// Fills a, b, c with stream_input_value(seed, ...) rounded to T.
template <typename T>
cudaError_t stream_init(T* a, T* b, T* c, std::uint64_t n, std::uint64_t seed, StreamLaunch l, cudaStream_t s);

// One pass of `op`. For dot/read, partial sums (one per block) go to `partials` (l.blocks doubles);
// stream_sum() adds them up.
template <typename T>
cudaError_t stream_run(StreamOp op, T* a, T* b, T* c, std::uint64_t n, double* partials, StreamLaunch l,
                       cudaStream_t s);

// Resident blocks per SM for the kernel of `op` at `threads` per block (occupancy API).
template <typename T>
int stream_blocks_per_sm(StreamOp op, int threads);

// dst[i] = src[i] for n 32-bit words with the same 16-byte vector copy loop as STREAM copy (the
// SM-driven copy of the copy benchmarks; dst and src may be on different GPUs with peer access).
cudaError_t copy_words(std::uint32_t* dst, const std::uint32_t* src, std::uint64_t n, StreamLaunch l, cudaStream_t s);
int copy_words_blocks_per_sm(int threads);

}  // namespace gpuscale::cuda
