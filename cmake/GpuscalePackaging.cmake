# Install rules and packages (docs/install.md). `cmake --install build --prefix P` gives
#   P/bin/gpuscale, P/bin/gpuscale-kernels      RUNPATH $ORIGIN/../lib, so the tree can be moved
#   P/lib/gpuscale/                             run-time backend modules (the CUDA backend), when built
#   P/share/gpuscale/{slurm,k8s,schema,data,grafana,docs} the job scripts, manifests, schemas, data files, the Grafana dashboard, docs
#   P/share/gpuscale/modulefiles/{lmod,tcl}/gpuscale/<version>  Lmod and Environment Modules files
# and `cpack` in the build folder makes gpuscale-<version>-Linux-<arch>.tar.gz and a .deb whose Depends
# are the Debian runtime packages of the libraries gpuscale links (never CUDA: the NVIDIA stack comes
# from NVIDIA's packages or the site's driver install).
set(GPUSCALE_SHARE_DIR share/gpuscale)
# cpack and `make install` package what was built (gpuscale, gpuscale-kernels) instead of building
# every target, tests included, first.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

# "lib", not GNUInstallDirs' multiarch folder: the binaries look for their modules at <exe>/../lib.
set_target_properties(gpuscale gpuscale-kernels PROPERTIES INSTALL_RPATH "\$ORIGIN/../lib")
install(TARGETS gpuscale gpuscale-kernels gpuscale-synth-results gpuscale-detection-power RUNTIME DESTINATION bin)
# The CUDA backend's module, found by bin/gpuscale at ../lib/gpuscale; its NVIDIA libraries are loaded
# before it by the loader's search (backends/cuda_module), so it carries no RUNPATH of the build machine.
if(TARGET gpuscale_cuda_backend)
  set_target_properties(gpuscale_cuda_backend PROPERTIES INSTALL_RPATH "")
  install(TARGETS gpuscale_cuda_backend LIBRARY DESTINATION lib/gpuscale)
endif()

install(FILES slurm/gpuscale-job.sh DESTINATION ${GPUSCALE_SHARE_DIR}/slurm)
install(PROGRAMS slurm/gpuscale.sbatch slurm/health.sbatch slurm/fleet.sbatch slurm/acceptance.sbatch slurm/merge.sbatch slurm/scaling-campaign
                 scripts/slurm-healthcheck
        DESTINATION ${GPUSCALE_SHARE_DIR}/slurm)
install(DIRECTORY k8s/ DESTINATION ${GPUSCALE_SHARE_DIR}/k8s)
install(FILES results/schema/result-defs.schema.json results/schema/result-v1.schema.json results/schema/result-v2.schema.json
              results/schema/result-v2.bundled.schema.json
              health/schema/health-v1.schema.json
        DESTINATION ${GPUSCALE_SHARE_DIR}/schema)
# Built into the binary as well; installed so a site can read them and pass edited copies
# (--peaks, --health-thresholds).
install(FILES peaks/gpus.json DESTINATION ${GPUSCALE_SHARE_DIR}/data/peaks)
install(FILES share/grafana/gpuscale-dashboard.json DESTINATION ${GPUSCALE_SHARE_DIR}/grafana)
install(FILES health/thresholds/default.json DESTINATION ${GPUSCALE_SHARE_DIR}/data/health-thresholds)
install(FILES README.md DESTINATION ${GPUSCALE_SHARE_DIR}/docs)
install(DIRECTORY docs/ DESTINATION ${GPUSCALE_SHARE_DIR}/docs FILES_MATCHING PATTERN "*.md")

# Modulefiles: they find the installed tree from their own path (so a moved tree or the unpacked
# .tar.gz still works); the configure-time prefix is only their fallback.
set(GPUSCALE_MODULE_VERSION ${PROJECT_VERSION})
configure_file(packaging/modulefile.lua.in ${CMAKE_CURRENT_BINARY_DIR}/packaging/${PROJECT_VERSION}.lua @ONLY)
configure_file(packaging/modulefile.tcl.in ${CMAKE_CURRENT_BINARY_DIR}/packaging/${PROJECT_VERSION} @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/packaging/${PROJECT_VERSION}.lua
        DESTINATION ${GPUSCALE_SHARE_DIR}/modulefiles/lmod/gpuscale)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/packaging/${PROJECT_VERSION}
        DESTINATION ${GPUSCALE_SHARE_DIR}/modulefiles/tcl/gpuscale)

# The Debian package that holds a library file (its real path; merged /usr tried both ways), or "".
function(gpuscale_deb_owner file out)
  set(${out} "" PARENT_SCOPE)
  if(NOT file OR NOT EXISTS "${file}")
    return()
  endif()
  file(REAL_PATH "${file}" real)
  string(REGEX REPLACE "^/usr/" "/" unmerged "${real}")
  foreach(path "${real}" "${unmerged}")
    execute_process(COMMAND dpkg-query -S "${path}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0 AND owner MATCHES "^([^:, ]+)")
      set(${out} ${CMAKE_MATCH_1} PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

# The runtime libraries gpuscale and gpuscale-kernels link, as files found at configure time.
set(_gpuscale_runtime_files ${MPI_CXX_LIBRARIES} ${GPUSCALE_BLAS_LINK_LIBRARIES} ${OpenMP_gomp_LIBRARY}
                            ${SQLite3_LIBRARIES} ${PostgreSQL_LIBRARIES} ${OPENSSL_CRYPTO_LIBRARY})
foreach(_t fmt::fmt benchmark::benchmark)
  if(TARGET ${_t})
    get_target_property(_loc ${_t} LOCATION)
    list(APPEND _gpuscale_runtime_files ${_loc})
  endif()
endforeach()
# openmpi-bin: mpirun, and orted, which a single MPI process starts (singleton MPI_Init).
set(_gpuscale_deb_depends openmpi-bin)
foreach(_f IN LISTS _gpuscale_runtime_files)
  gpuscale_deb_owner("${_f}" _pkg)
  if(_pkg MATCHES "^libopenblas0-")  # one of the pthread/openmp/serial builds: any of them will do
    set(_pkg "libopenblas0 | ${_pkg}")
  endif()
  if(_pkg AND NOT _pkg MATCHES "-dev$")
    list(APPEND _gpuscale_deb_depends "${_pkg}")
  endif()
endforeach()
list(REMOVE_DUPLICATES _gpuscale_deb_depends)
list(LENGTH _gpuscale_deb_depends _n)
if(_n LESS 5)  # not a Debian/Ubuntu host (no dpkg database): Debian 12's names
  set(_gpuscale_deb_depends openmpi-bin libopenmpi3 libopenblas0 libgomp1 libfmt9 libbenchmark1debian libsqlite3-0
                             libpq5 libssl3)
  message(STATUS "gpuscale: package owners of the runtime libraries not found with dpkg-query; "
                 "the .deb depends on Debian 12's names")
endif()
list(APPEND _gpuscale_deb_depends libstdc++6 libc6)
list(JOIN _gpuscale_deb_depends ", " GPUSCALE_DEB_DEPENDS)

set(CPACK_PACKAGE_NAME gpuscale)
set(CPACK_PACKAGE_VENDOR gpuscale)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Distributed GPU benchmark and scaling suite (MPI, CUDA, NCCL; CPU backend)")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_GENERATOR TGZ DEB)
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "gpuscale maintainers <gpuscale@localhost>")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${GPUSCALE_DEB_DEPENDS}")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION "Distributed GPU benchmark and scaling suite
gpuscale measures GPUs and clusters: STREAM, GEMM, host/device copies, every collective (NCCL or MPI),
a data-parallel training step, GPU health. The CUDA backend needs NVIDIA's driver, CUDA runtime, cuBLAS
and NCCL, which this package does not depend on; the CPU backend runs without them.")
message(STATUS "gpuscale: .deb depends on ${GPUSCALE_DEB_DEPENDS}")
include(CPack)
