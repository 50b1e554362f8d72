#pragma once
// Repeated identical products computed once (the emulated node's issue allows it: "Repeated identical
// work ... may be computed once"): a benchmark runs one product many times over the same inputs, and
// a large product takes the host minutes. A product (pointers, sizes, types, scalars, scales and
// planted flips) is not computed again while nothing has written the memory of its inputs (A, B, and
// C when beta is not zero) since it last was; the core's write log answers that (emu_core.h, "Writes
// to device memory") without reading them. When D itself was overwritten since (the dp-step's
// all-reduce overwrites each weight gradient), D is restored from the copy kept of it, within a
// memory budget, or computed again. Results never depend on whether a product was computed: D ends
// holding exactly what computing it would write. Reading the contents instead (hashing A, B and D)
// took 98% of a GEMM run's time: a batch of 2,000 products of 512^3 hashed 12 GB per graph launch.
#include <cstdint>
#include <functional>

#include "tests/emulated_gpu/cublaslt/lt_product.h"

namespace gpuscale_emu::lt {

// Runs compute_product(s) then `after` (the planted flip), unless D already holds, or can be given
// back, exactly what they would write. `after_tag` names what `after` does (0: nothing), so a product
// with another flip is not taken for this one.
void compute_product_once(const ProductSpec& s, std::uint64_t after_tag, const std::function<void()>& after);

// How many products compute_product_once computed, skipped (D still held the result) and restored
// (D given back from its copy) in this process (for tests).
struct ProductCacheCounts {
  unsigned long computed = 0, skipped = 0, restored = 0;
};
ProductCacheCounts product_cache_counts();

}  // namespace gpuscale_emu::lt
