# Runs the tpevent tool once and checks what it did.
#
#   cmake -DEXPECT_EXIT=<code> [-DSTDOUT_LINES=<re>@@<re>...] [-DSTDERR_LINES=...]
#         [-DSTDOUT_EXACT=<text>] [-DSTDOUT_EMPTY=ON] [-DREQUIRE_UNAVAILABLE=<backend>]
#         [-DSTDOUT_FILE=<path>] -P run_tool.cmake -- <tool> <args>...
#
# STDOUT_FILE: stdout goes to that file instead (/dev/full: every write fails), and
# STDOUT_LINES, STDOUT_EXACT and STDOUT_EMPTY are not checked. It must be a character
# device: where it is not (a /dev/full that is a regular file, or none), the test is
# skipped with the reason, since a write to it would not fail.
# Each regular expression in STDOUT_LINES / STDERR_LINES (separated by "@@") must match
# at least one line of that output. REQUIRE_UNAVAILABLE: the test needs that backend
# unavailable; where it is available the script prints TPEVENT_TOOL_SKIP (the test's
# SKIP_REGULAR_EXPRESSION), since cmake -P cannot exit with 77 before CMake 3.29.

cmake_minimum_required(VERSION 3.25)

set(command "")
set(after_separator OFF)
math(EXPR last_argument "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last_argument})
  if(after_separator)
    list(APPEND command "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after_separator ON)
  endif()
endforeach()
if(NOT command)
  message(FATAL_ERROR "run_tool.cmake: no command after --")
endif()
if(NOT DEFINED EXPECT_EXIT)
  message(FATAL_ERROR "run_tool.cmake: EXPECT_EXIT is required")
endif()
list(GET command 0 tool)

if(REQUIRE_UNAVAILABLE)
  execute_process(COMMAND "${tool}" devices OUTPUT_VARIABLE devices_output
                  RESULT_VARIABLE devices_exit)
  if(NOT devices_exit EQUAL 0)
    message(FATAL_ERROR "'tpevent devices' failed (${devices_exit}):\n${devices_output}")
  endif()
  string(REGEX MATCH "(^|\n)${REQUIRE_UNAVAILABLE} +[a-z]+ +[a-z]+ +[0-9]+ +available"
         available "${devices_output}")
  if(available)
    message("TPEVENT_TOOL_SKIP: ${REQUIRE_UNAVAILABLE} is available on this machine; "
            "this test needs it unavailable")
    return()
  endif()
endif()

if(DEFINED STDOUT_FILE)
  execute_process(COMMAND test -c "${STDOUT_FILE}" RESULT_VARIABLE not_a_device)
  if(NOT not_a_device EQUAL 0)
    message("TPEVENT_TOOL_SKIP: ${STDOUT_FILE} is not a character device on this machine "
            "(a regular file, or missing): a write to it would not fail")
    return()
  endif()
  execute_process(COMMAND ${command}
                  OUTPUT_FILE "${STDOUT_FILE}" ERROR_VARIABLE stderr RESULT_VARIABLE exit_code)
  set(stdout "(written to ${STDOUT_FILE})\n")
else()
  execute_process(COMMAND ${command}
                  OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr RESULT_VARIABLE exit_code)
endif()
string(JOIN " " command_text ${command})
set(report "command: ${command_text}\nexit: ${exit_code}\n--- stdout\n${stdout}--- stderr\n${stderr}---")

set(failures "")
if(NOT exit_code STREQUAL EXPECT_EXIT)
  string(APPEND failures "exit code ${exit_code}, expected ${EXPECT_EXIT}\n")
endif()

function(check_lines stream_name text patterns)
  string(REPLACE "@@" ";" pattern_list "${patterns}")
  # One list element per line; brackets in the output must not form list syntax.
  string(REPLACE ";" "\\;" escaped "${text}")
  string(REPLACE "\n" ";" lines "${escaped}")
  foreach(pattern IN LISTS pattern_list)
    set(found OFF)
    foreach(line IN LISTS lines)
      if(line MATCHES "${pattern}")
        set(found ON)
        break()
      endif()
    endforeach()
    if(NOT found)
      string(APPEND failures "no line of ${stream_name} matches: ${pattern}\n")
    endif()
  endforeach()
  set(failures "${failures}" PARENT_SCOPE)
endfunction()

if(DEFINED STDOUT_LINES)
  check_lines(stdout "${stdout}" "${STDOUT_LINES}")
endif()
if(DEFINED STDERR_LINES)
  check_lines(stderr "${stderr}" "${STDERR_LINES}")
endif()
if(DEFINED STDOUT_EXACT AND NOT stdout STREQUAL "${STDOUT_EXACT}\n")
  string(APPEND failures "stdout is not exactly '${STDOUT_EXACT}' and a newline\n")
endif()
if(STDOUT_EMPTY AND NOT stdout STREQUAL "")
  string(APPEND failures "stdout is not empty\n")
endif()

if(failures)
  message(FATAL_ERROR "${failures}${report}")
endif()
message("${report}")
