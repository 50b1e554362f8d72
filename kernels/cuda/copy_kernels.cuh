#pragma once
// Kernels of the copy benchmarks: fill a buffer with the random words of kernels/copy_table.h, and
// count the words that differ from them (the check of a copy's destination).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/stream_kernels.cuh"

namespace gpuscale::cuda {

cudaError_t fill_copy_words(std::uint32_t* p, std::uint64_t n, std::uint64_t seed, StreamLaunch l, cudaStream_t s);

// Adds to counts[0] the words that differ from copy_word(seed, i) and lowers counts[1] to the first
// such index (the caller sets counts to {0, UINT64_MAX}).
cudaError_t count_wrong_copy_words(const std::uint32_t* p, std::uint64_t n, std::uint64_t seed,
                                   unsigned long long* counts, StreamLaunch l, cudaStream_t s);

}  // namespace gpuscale::cuda
