// core/dtype_table.def as a whole: every row's names parse back to it and to no other, each family's
// list is the one the benchmarks measured before the table, every type MPI carries has an exact host
// codec, every GEMM type has its rule, and the help text and listings name every type. A new row is
// held to these without a change here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/element_codec.h"
#include "kernels/gemm_spec.h"

namespace gpuscale {
namespace {

std::set<std::string> names_of(const std::vector<DType>& types) {
  std::set<std::string> out;
  for (DType t : types) out.insert(std::string(dtype_name(t)));
  return out;
}

TEST(DTypeTable, EveryNameParsesToItsOwnTypeAndNoOther) {
  std::map<std::string, std::string> owner;
  ASSERT_EQ(every_dtype().size(), dtype_table().size());
  for (std::size_t i = 0; i < dtype_table().size(); ++i) {
    const auto& t = dtype_table()[i];
    SCOPED_TRACE(std::string(t.name));
    EXPECT_EQ(static_cast<std::size_t>(t.type), i) << "the table's order is the enum's";
    EXPECT_EQ(&dtype_info(t.type), &t);
    std::vector<std::string_view> names = {t.name, t.nccl_tests};
    names.insert(names.end(), t.aliases.begin(), t.aliases.end());
    for (auto n : names) {
      if (n.empty()) continue;
      const auto parsed = parse_dtype(n);
      ASSERT_TRUE(parsed) << n;
      EXPECT_EQ(*parsed, t.type) << n;
      const auto [it, fresh] = owner.emplace(std::string(n), std::string(t.name));
      EXPECT_TRUE(fresh || it->second == t.name) << n << " is claimed by " << it->second << " and " << t.name;
    }
    EXPECT_GT(t.size, 0u);
    EXPECT_NE(dtype_names_text().find(t.name), std::string::npos);
  }
  EXPECT_FALSE(parse_dtype(""));
}

TEST(DTypeTable, FamiliesAreTheTypesEachBenchmarkMeasures) {
  // The lists the benchmarks held before the table (harness/benchmarks/collectives.cpp's type list,
  // gemm.cpp's "every type but int32", the backends' STREAM kernels).
  EXPECT_EQ(names_of(dtypes_for(kForCollectives)),
            (std::set<std::string>{"fp64", "fp32", "fp16", "bf16", "int32", "int8", "fp8_e4m3", "fp8_e5m2"}));
  EXPECT_EQ(names_of(dtypes_for(kForGemm)),
            (std::set<std::string>{"fp64", "fp32", "tf32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2", "int8"}));
  EXPECT_EQ(names_of(dtypes_for(kForStream)), (std::set<std::string>{"fp64", "fp32"}));
  EXPECT_EQ(names_of(dtypes_for(kForTraining)), (std::set<std::string>{"fp64", "fp32", "tf32", "fp16", "bf16"}));
  EXPECT_EQ(dtype_names_text(kForStream), "fp64, fp32");
  EXPECT_TRUE(dtype_used_by(DType::int32, kForCollectives));
  EXPECT_FALSE(dtype_used_by(DType::int32, kForGemm));
}

TEST(DTypeTable, EveryTypeMpiCarriesHasAnExactHostCodec) {
  // The MPI path fills and checks buffers on the host, so every type with an MPI row needs a codec
  // that holds the check's integers exactly (random values up to its exact-integer limit, capped).
  std::mt19937_64 rng(41);
  int checked = 0;
  for (const auto& t : dtype_table()) {
    if (t.mpi.empty()) continue;
    SCOPED_TRACE(std::string(t.name));
    const double limit = std::min(dtype_exact_integer_limit(t.type), 1e6);
    std::vector<unsigned char> buf(32 * t.size);
    for (std::size_t i = 0; i < 32; ++i) {
      const double v = std::floor(std::uniform_real_distribution<double>(-limit, limit)(rng));
      store_element(t.type, buf.data(), i, v);
      ASSERT_EQ(load_element(t.type, buf.data(), i), v) << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

TEST(DTypeTable, LibraryNamesAreTheRowsSpellings) {
  EXPECT_EQ(dtype_info(DType::fp64).nccl, "ncclFloat64");
  EXPECT_EQ(dtype_info(DType::bf16).nccl, "ncclBfloat16");
  EXPECT_EQ(dtype_info(DType::fp32).mpi, "MPI_FLOAT");
  EXPECT_TRUE(dtype_info(DType::fp32).mpi_reduces);
  EXPECT_EQ(dtype_info(DType::fp16).mpi, "MPI_UINT16_T");
  EXPECT_FALSE(dtype_info(DType::fp16).mpi_reduces) << "MPI has no fp16 arithmetic: moved as bits";
  EXPECT_TRUE(dtype_info(DType::fp8_e4m3).mpi.empty());
  EXPECT_EQ(dtype_info(DType::tf32).cublaslt_compute, "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_TRUE(dtype_info(DType::int32).cublaslt_compute.empty());
  EXPECT_EQ(dtype_nccl_tests_name(DType::fp32), "float");
  EXPECT_EQ(dtype_nccl_tests_name(DType::fp8_e4m3), "f8e4m3");
  EXPECT_EQ(dtype_nccl_tests_name(DType::tf32), "tf32") << "nccl-tests has no tf32: our name";
}

TEST(DTypeTable, EveryGemmTypeHasItsRule) {
  for (DType t : every_dtype()) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    const auto* r = gemm_type_rule(t);
    EXPECT_EQ(r != nullptr, dtype_used_by(t, kForGemm));
    if (!r) continue;
    EXPECT_EQ(r->type, t);
    EXPECT_GE(dtype_size(r->output), dtype_size(t)) << "C holds at least A's precision";
    EXPECT_EQ(r->output_eps == 0, !dtype_is_float(t)) << "only integer GEMMs are exact";
    EXPECT_LE(r->accum_eps, dtype_epsilon(DType::fp32)) << "accumulation is fp32 or better";
  }
  // The tolerance columns as kernels/gemm_spec.h derives them (fp32 accumulation, tf32's rounded inputs).
  EXPECT_EQ(gemm_tolerance(DType::tf32).input_eps, 4 * std::ldexp(1.0, -11));
  EXPECT_EQ(gemm_tolerance(DType::fp16).output_eps, std::ldexp(1.0, -11));
  EXPECT_EQ(gemm_tolerance(DType::fp16).accum_eps, std::ldexp(1.0, -24));
  EXPECT_EQ(gemm_tolerance(DType::fp8_e4m3, true).chunk_eps, std::ldexp(1.0, -13));
  EXPECT_EQ(gemm_tolerance(DType::fp8_e4m3, false).chunk_eps, 0.0);
  EXPECT_EQ(gemm_tolerance(DType::int8).accum_eps, 0.0);
  EXPECT_TRUE(gemm_default_transpose_a(DType::int8));
  EXPECT_FALSE(gemm_default_transpose_a(DType::bf16));
}

}  // namespace
}  // namespace gpuscale
