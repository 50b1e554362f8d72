#pragma once
// Repeated identical products computed once (the emulated node's issue allows it: "Repeated identical
// work ... may be computed once"): a benchmark runs one product many times over the same inputs, and
// a large product takes the host minutes. A product (pointers, sizes, types, scalars, scales and
// planted flips) is not computed again while nothing has written the memory of its inputs (A, B, and
// C when beta is not zero) since it last was; the core's write log answers that (emu_core.h, "Writes
// to device memory") without reading them. When D itself was overwritten since (the dp-step's
// all-reduce overwrites each weight gradient), D is restored from the copy kept of it. Where the log
// cannot tell (new buffers, or a kernel wrote), the inputs' contents decide: a product whose inputs
// hash (SHA-256) to those of a product kept before gets that product's D (a new row of the same
// benchmark fills new buffers with the same seeded values). Copies are kept within a memory budget and
// only of a packed D (leading dimension m: no bytes between columns that the product would not
// write). Results never depend on whether a product was computed: D ends holding exactly what
// computing it would write. Hashing on every call instead took 98% of a GEMM run's time (a batch of
// 2,000 products of 512^3 hashed 12 GB per graph launch), so the log is asked first.
#include <cstdint>
#include <functional>

#include "tests/emulated_gpu/cublaslt/lt_product.h"

namespace gpuscale_emu::lt {

// Runs compute_product(s) then `after` (the planted flip), unless D already holds, or can be given
// back, exactly what they would write. `after_tag` names what `after` does (0: nothing), so a product
// with another flip is not taken for this one.
void compute_product_once(const ProductSpec& s, std::uint64_t after_tag, const std::function<void()>& after);

// How many products compute_product_once computed, skipped (D still held the result) and restored
// (D given back from a copy: of this product, or of one with the same inputs) in this process (tests).
struct ProductCacheCounts {
  unsigned long computed = 0, skipped = 0, restored = 0;
};
ProductCacheCounts product_cache_counts();

}  // namespace gpuscale_emu::lt
