#pragma once
// The reductions of the emulated NCCL (tests only): every built-in ncclRedOp_t over every
// ncclDataType_t, computed on the host. Inputs are combined in rank order 0..n-1, so every rank that
// reduces the same inputs gets bitwise the same result (the project's exact check,
// collectives/collective_check.h, expects it of NCCL too).
#include <nccl.h>

#include <cstddef>

namespace emu_nccl {

// Bytes of one element; 0 for a type nccl.h does not define.
std::size_t type_size(ncclDataType_t t);
// Whether `op` is one of nccl.h's built-in ops (ncclSum .. ncclAvg).
bool builtin_op(ncclRedOp_t op);

// out[i] = op over r = 0..n-1 of inputs[r][i], for i < count. `out` may alias one of the inputs.
//  - 16-bit and fp8 types compute in float and round to the type after every step, as NCCL's kernels
//    do (they add halves with __hadd, fp8 through half).
//  - Float avg is NCCL's PreMulSum: each input times 1/n rounded to the type, then summed (nccl.h,
//    ncclAvg: "ncclAvg ... computes the average"; NCCL's src/collectives.h applies it as a
//    premultiplied sum for floating types).
//  - Integer avg is SumPostDiv: the sum in the type (wrapping), then divided toward zero.
//  - Integer sum and prod wrap at the type's width.
void reduce_ranks(ncclDataType_t t, ncclRedOp_t op, int n, const void* const* inputs, void* out, std::size_t count);

}  // namespace emu_nccl
