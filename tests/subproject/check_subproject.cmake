# tpevent as a subproject (tests/subproject/parent, FetchContent from this tree):
#
#  1. the parent configures with an empty CMAKE_BUILD_TYPE and nothing of tpevent's
#     set but the backends: TPEVENT_WERROR is OFF, tpevent's own files compile with
#     its warnings and without -Werror, the parent's (empty) build type is kept, and
#     a program linked with tpevent::tpevent builds and runs;
#  2. the parent asks for -DTPEVENT_WERROR=ON: tpevent's files get -Werror.
#
#   cmake -DSOURCE_DIR=... -DPARENT_DIR=... -DWORK_DIR=... -DGENERATOR=...
#         -DC_COMPILER=... -P check_subproject.cmake
cmake_minimum_required(VERSION 3.25)

foreach(variable SOURCE_DIR PARENT_DIR WORK_DIR GENERATOR C_COMPILER)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "check_subproject.cmake: ${variable} is required")
  endif()
endforeach()
file(REMOVE_RECURSE "${WORK_DIR}")

# Configures the parent in WORK_DIR/<name> with the extra arguments.
function(configure_parent name)
  set(dir "${WORK_DIR}/${name}")
  execute_process(
    COMMAND "${CMAKE_COMMAND}" -S "${PARENT_DIR}" -B "${dir}" -G "${GENERATOR}"
            "-DCMAKE_C_COMPILER=${C_COMPILER}" "-DTPEVENT_SOURCE_DIR=${SOURCE_DIR}"
            -DCMAKE_EXPORT_COMPILE_COMMANDS=ON -DBUILD_TESTING=OFF
            -DTPEVENT_CUDA=OFF -DTPEVENT_HIP=OFF -DTPEVENT_PYTHON=OFF ${ARGN}
    OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "configuring the parent (${name}) failed:\n${output}")
  endif()
endfunction()

# The compile command of core/registry.c, one of tpevent's own files.
function(registry_command name out)
  file(READ "${WORK_DIR}/${name}/compile_commands.json" commands)
  string(JSON count LENGTH "${commands}")
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON file GET "${commands}" ${i} file)
    if(file MATCHES "/core/registry\\.c$")
      string(JSON command GET "${commands}" ${i} command)
      set(${out} "${command}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
  message(FATAL_ERROR "${name}: no compile command for core/registry.c in compile_commands.json")
endfunction()

function(cache_value name variable out)
  file(STRINGS "${WORK_DIR}/${name}/CMakeCache.txt" line REGEX "^${variable}:[A-Z]+=")
  string(REGEX REPLACE "^[^=]*=" "" value "${line}")
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

set(failures "")

# ------------------------------------------------------------ 1. as a user pulls it in
configure_parent(plain "-DCMAKE_BUILD_TYPE=")
cache_value(plain TPEVENT_WERROR werror)
if(NOT werror STREQUAL "OFF")
  string(APPEND failures "TPEVENT_WERROR is '${werror}' in a subproject, expected OFF\n")
endif()
cache_value(plain CMAKE_BUILD_TYPE build_type)
if(NOT build_type STREQUAL "")
  string(APPEND failures "the parent's empty build type became '${build_type}'\n")
endif()
registry_command(plain command)
if(command MATCHES "(^| )-Werror( |$)")
  string(APPEND failures "tpevent's core/registry.c compiles with -Werror in a subproject: ${command}\n")
endif()
if(NOT command MATCHES "(^| )-Wall( |$)")
  string(APPEND failures "tpevent's core/registry.c compiles without its warnings: ${command}\n")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --build "${WORK_DIR}/plain" --target uses_tpevent
                OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  string(APPEND failures "building the parent's program failed:\n${output}\n")
else()
  execute_process(COMMAND "${WORK_DIR}/plain/uses_tpevent"
                  OUTPUT_VARIABLE output ERROR_VARIABLE output RESULT_VARIABLE result)
  message("${output}")
  if(NOT result EQUAL 0 OR NOT output MATCHES "^uses_tpevent: tpevent [0-9]+\\.[0-9]+\\.[0-9]+, elapsed")
    string(APPEND failures "the parent's program failed (${result}): ${output}\n")
  endif()
endif()

# ---------------------------------------------------- 2. the parent asks for -Werror
configure_parent(werror -DCMAKE_BUILD_TYPE=Release -DTPEVENT_WERROR=ON)
registry_command(werror command)
if(NOT command MATCHES "(^| )-Werror( |$)")
  string(APPEND failures "-DTPEVENT_WERROR=ON, yet core/registry.c compiles without -Werror: ${command}\n")
endif()
cache_value(werror CMAKE_BUILD_TYPE build_type)
if(NOT build_type STREQUAL "Release")
  string(APPEND failures "the parent's build type Release became '${build_type}'\n")
endif()

if(failures)
  message(FATAL_ERROR "${failures}")
endif()
message("subproject: TPEVENT_WERROR off by default, on when asked; the parent's build type kept; "
        "tpevent::tpevent links and runs")
