# Version and git commit baked into the binary (gpuscale --version, and every result file).
execute_process(COMMAND git describe --always --dirty --abbrev=12
                WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
                OUTPUT_VARIABLE GPUSCALE_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET RESULT_VARIABLE _git_rc)
if(NOT _git_rc EQUAL 0 OR GPUSCALE_GIT_COMMIT STREQUAL "")
  set(GPUSCALE_GIT_COMMIT "unknown")
endif()
configure_file(${CMAKE_CURRENT_SOURCE_DIR}/core/version.h.in ${CMAKE_CURRENT_BINARY_DIR}/generated/gpuscale_version.h @ONLY)
