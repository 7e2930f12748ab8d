# A TEST type of the list is known to the test core only (tests/device_types):
#   cmake -DPROGRAM=<tpevent_test_type_known> -DTYPE=<type> -DFOLDER=<test core's folder> -P check_test_type.cmake
# The main core (the program's own run path) refuses the type as unknown; with
# LD_LIBRARY_PATH on FOLDER the test core loads its module from FOLDER, with a device.
execute_process(COMMAND "${PROGRAM}" "${TYPE}" OUTPUT_VARIABLE main_core RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT main_core MATCHES "status: TP_ERR_INVALID_DEVICE\nerror: [^\n]*unknown device type '${TYPE}'")
  message(FATAL_ERROR "the main core should not know '${TYPE}' (rc ${rc}):\n${main_core}")
endif()
if(main_core MATCHES "known: [^)]*${TYPE}")
  message(FATAL_ERROR "the main core names '${TYPE}' among the known types:\n${main_core}")
endif()

set(ENV{LD_LIBRARY_PATH} "${FOLDER}:$ENV{LD_LIBRARY_PATH}")
unset(ENV{TPEVENT_BACKEND_PATH})
execute_process(COMMAND "${PROGRAM}" "${TYPE}" OUTPUT_VARIABLE test_core RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT test_core MATCHES "status: TP_OK\nloaded: 1\ndevices: [1-9][0-9]*\nmodule: ${FOLDER}/libtpevent-${TYPE}")
  message(FATAL_ERROR "the test core in ${FOLDER} should load '${TYPE}' from there (rc ${rc}):\n${test_core}")
endif()
message(STATUS "main core:\n${main_core}test core:\n${test_core}")
