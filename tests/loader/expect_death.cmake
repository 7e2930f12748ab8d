# cmake -DPROGRAM=... -DARGS=a;b -P expect_death.cmake
# Passes when the program is killed by a signal: documents what the module probe
# exists to prevent.
execute_process(COMMAND ${PROGRAM} ${ARGS} RESULT_VARIABLE result OUTPUT_QUIET ERROR_QUIET)
if(result MATCHES "^[0-9]+$")
  message(FATAL_ERROR "${PROGRAM} exited with ${result}; expected it to die of a signal")
endif()
message(STATUS "died as expected: ${result}")
