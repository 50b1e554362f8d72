# Every dependency comes from a distribution package (or a cluster module); a missing one stops the
# configure step with the Debian/Ubuntu package to install. scripts/install-deps installs them all.
include(FindPkgConfig)

function(gpuscale_missing what package)
  message(FATAL_ERROR "gpuscale: ${what} not found: install the Debian/Ubuntu package '${package}' "
                      "(or run scripts/install-deps), or load your cluster's module for it")
endfunction()

find_package(MPI COMPONENTS C CXX QUIET)
if(NOT MPI_CXX_FOUND)
  gpuscale_missing("MPI (C/C++ bindings)" "libopenmpi-dev openmpi-bin")
endif()

find_package(OpenMP COMPONENTS CXX QUIET)
if(NOT OpenMP_CXX_FOUND)
  gpuscale_missing("OpenMP for ${CMAKE_CXX_COMPILER_ID}" "libgomp1 (g++) or libomp-dev (clang)")
endif()

find_package(nlohmann_json 3.10 QUIET)
if(NOT nlohmann_json_FOUND)
  gpuscale_missing("nlohmann_json >= 3.10" "nlohmann-json3-dev")
endif()

find_package(CLI11 QUIET)
if(NOT CLI11_FOUND)
  gpuscale_missing("CLI11" "libcli11-dev")
endif()

find_package(fmt QUIET)
if(NOT fmt_FOUND)
  gpuscale_missing("fmt" "libfmt-dev")
endif()

# Boost.Math, header-only: the quantiles of the outlier rule (analysis/outliers.cpp).
find_package(Boost 1.71 QUIET)
if(NOT Boost_FOUND)
  gpuscale_missing("Boost.Math (headers)" "libboost-math-dev")
endif()

# BLAS with the C interface (cblas.h). OpenBLAS through pkg-config first; GPUSCALE_BLAS_PC names
# another pkg-config module (e.g. "blis" or "flexiblas") for sites that use one.
set(GPUSCALE_BLAS_PC "openblas" CACHE STRING "pkg-config module that provides BLAS with cblas.h")
pkg_check_modules(GPUSCALE_BLAS QUIET IMPORTED_TARGET ${GPUSCALE_BLAS_PC})
if(NOT GPUSCALE_BLAS_FOUND)
  gpuscale_missing("BLAS (pkg-config module '${GPUSCALE_BLAS_PC}')" "libopenblas-dev pkg-config")
endif()

if(GPUSCALE_TESTS)
  find_package(GTest QUIET)
  if(NOT GTest_FOUND)
    gpuscale_missing("GoogleTest" "libgtest-dev libgmock-dev")
  endif()
endif()

find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  gpuscale_missing("Google Benchmark" "libbenchmark-dev")
endif()

# JSON Schema validation of result files (header-only).
find_package(valijson QUIET)
if(NOT valijson_FOUND)
  gpuscale_missing("valijson" "libvalijson-dev")
endif()

# The results history (history/, docs/history.md): SQLite, libpq (PostgreSQL's client) and libcrypto (SHA-256).
find_package(SQLite3 QUIET)
if(NOT SQLite3_FOUND)
  gpuscale_missing("SQLite 3" "libsqlite3-dev")
endif()
find_package(PostgreSQL QUIET)
if(NOT PostgreSQL_FOUND)
  gpuscale_missing("libpq (PostgreSQL client library)" "libpq-dev")
endif()
find_package(OpenSSL QUIET COMPONENTS Crypto)
if(NOT OpenSSL_FOUND)
  gpuscale_missing("OpenSSL libcrypto (SHA-256)" "libssl-dev")
endif()
