#pragma once
// Repeated identical products computed once (the emulated node's issue allows it: "Repeated identical
// work ... may be computed once"): a benchmark runs one product many times over the same inputs, and
// a large product takes the host minutes. A product is skipped only when the same product (pointers,
// sizes, types, scalars, scales and planted flips) left its result in D and no write to device memory
// has happened since (the core's device_write_epoch: copies, sets, kernels, collectives and every
// product computed count), so A, B, C and D hold what they held; results never depend on whether it
// was skipped. Reading the contents instead (hashing A, B and D) took 98% of a GEMM run's time:
// a batch of 2,000 products of 512^3 hashed 12 GB per graph launch.
#include <cstdint>
#include <functional>

#include "tests/emulated_gpu/cublaslt/lt_product.h"

namespace gpuscale_emu::lt {

// Runs compute_product(s) then `after` (the planted flip), unless the cache shows D already holds
// exactly what they would write. `after_tag` names what `after` does (0: nothing), so a product with
// another flip is not taken for this one.
void compute_product_once(const ProductSpec& s, std::uint64_t after_tag, const std::function<void()>& after);

// How many products compute_product_once computed and skipped in this process (for tests).
struct ProductCacheCounts {
  unsigned long computed = 0, skipped = 0;
};
ProductCacheCounts product_cache_counts();

}  // namespace gpuscale_emu::lt
