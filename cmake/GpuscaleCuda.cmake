# GPUSCALE_CUDA=AUTO enables the CUDA backend when nvcc is found; ON requires it; OFF skips it.
# The CPU backend always builds.
set(GPUSCALE_HAVE_CUDA OFF)
if(NOT GPUSCALE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc AND NOT DEFINED ENV{CUDACXX})
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Real machine code for the GPUs users run, PTX for the newest so later GPUs can JIT it.
    # GPUSCALE_CUDA_ARCHS limits the list for quick local builds (e.g. -DGPUSCALE_CUDA_ARCHS=90).
    set(GPUSCALE_CUDA_ARCHS "80-real;86-real;89-real;90-real;100-real;120" CACHE STRING
        "CUDA architectures to build (CMake CUDA_ARCHITECTURES syntax)")
    set(CMAKE_CUDA_ARCHITECTURES ${GPUSCALE_CUDA_ARCHS})
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 flags for nvcc; kernels need only C++17
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    # CUDA 12.4 and newer: the module links that toolkit's libcudart/libcublasLt (.so.12 or .so.13) and
    # the loader looks for the same major (backends/cuda_module/cuda_library_plan.cpp).
    if(CUDAToolkit_VERSION VERSION_LESS 12.4)
      message(FATAL_ERROR "gpuscale: CUDA ${CUDAToolkit_VERSION} found; the CUDA backend needs 12.4 or newer "
                          "(or configure with -DGPUSCALE_CUDA=OFF)")
    endif()
    # NCCL, the CUDA backend's collective transport: in the CUDA toolkit's directories (NVIDIA's
    # packages put it there) or NCCL_HOME.
    find_path(GPUSCALE_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} $ENV{NCCL_HOME}/include)
    find_library(GPUSCALE_NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} $ENV{NCCL_HOME}/lib)
    if(NOT GPUSCALE_NCCL_INCLUDE_DIR OR NOT GPUSCALE_NCCL_LIBRARY)
      message(FATAL_ERROR "gpuscale: NCCL not found next to CUDA ${CUDAToolkit_VERSION}: install NVIDIA's "
                          "'libnccl-dev' package (or set NCCL_HOME), or configure with -DGPUSCALE_CUDA=OFF")
    endif()
    add_library(gpuscale::nccl UNKNOWN IMPORTED)
    set_target_properties(gpuscale::nccl PROPERTIES IMPORTED_LOCATION ${GPUSCALE_NCCL_LIBRARY}
                          INTERFACE_INCLUDE_DIRECTORIES ${GPUSCALE_NCCL_INCLUDE_DIR})
    set(GPUSCALE_HAVE_CUDA ON)
    message(STATUS "gpuscale: CUDA backend ON (nvcc ${CMAKE_CUDA_COMPILER_VERSION}, archs ${GPUSCALE_CUDA_ARCHS})")
  elseif(GPUSCALE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "gpuscale: GPUSCALE_CUDA=ON but nvcc was not found: install the CUDA toolkit "
                        "or set CUDACXX=/path/to/nvcc")
  else()
    message(STATUS "gpuscale: CUDA backend OFF (nvcc not found; the CPU backend is built)")
  endif()
else()
  message(STATUS "gpuscale: CUDA backend OFF (GPUSCALE_CUDA=OFF)")
endif()
