# Runs one libFuzzer target for SECONDS over a scratch copy of its seed corpus (ctest's fuzz tests).
#   cmake -DFUZZER=... -DCORPUS=dir|dir... -DWORK=... -DSECONDS=... -DARTIFACTS=... -P run_fuzzer.cmake
string(REPLACE "|" ";" CORPUS "${CORPUS}")  # the seed folders, each passed to libFuzzer (read only)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
get_filename_component(_artifacts_dir ${ARTIFACTS} DIRECTORY)
file(MAKE_DIRECTORY ${_artifacts_dir})
# -rss_limit_mb: a reader that balloons on a small input is a finding too. -timeout: one input taking
# seconds is a hang.
execute_process(COMMAND ${FUZZER} ${WORK} ${CORPUS} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048
                        -max_len=65536 -print_final_stats=1 -artifact_prefix=${ARTIFACTS}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${FUZZER} found a failing input (exit ${rc}): see ${_artifacts_dir}; keep it in its corpus folder (one of ${CORPUS}) "
                      "once fixed, so the replay test guards it")
endif()
