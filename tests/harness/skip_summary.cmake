# The skipped tests of the CTest run that just ended, grouped by reason: one line per
# reason with its count, most frequent first. Run by CTest after the tests
# (CTEST_CUSTOM_POST_TEST, tests/CMakeLists.txt) on the JUnit file the test presets
# write (CMakePresets.json, outputJUnitFile); a run that wrote none (plain `ctest`)
# prints nothing, since CTEST_CUSTOM_PRE_TEST removed the last one.
#
#   cmake -DRESULTS=<junit.xml> -P skip_summary.cmake
#
# A test's reason is the last line of its output that starts with "skipped:", "SKIP:"
# or "TPEVENT_TOOL_SKIP:" (what the harness, the Python tests and the scripts print),
# else its last line, else "(no reason printed)"; one that quotes a backend module's
# reason is grouped under that reason. Always exits 0: a summary never fails
# the run.
if(NOT EXISTS "${RESULTS}")
  return()
endif()
file(READ "${RESULTS}" xml)
# CMake lists split on ';' and keep '[...]' together: all three are taken out of the
# way, as tags, which XML text cannot hold unescaped.
string(REPLACE ";" "<sc/>" xml "${xml}")
string(REPLACE "[" "<lb/>" xml "${xml}")
string(REPLACE "]" "<rb/>" xml "${xml}")
string(REPLACE "<testcase " ";<testcase " cases "${xml}")

set(keys "")
set(total 0)
foreach(case IN LISTS cases)
  # Skipped tests are notrun with a <skipped> message other than Disabled (CTest's own).
  if(NOT case MATCHES "status=\"notrun\"" OR NOT case MATCHES "<skipped message=\"([^\"]*)\"")
    continue()
  endif()
  if(CMAKE_MATCH_1 STREQUAL "Disabled")
    continue()
  endif()
  set(output "")
  if(case MATCHES "<system-out>(.*)</system-out>")
    set(output "${CMAKE_MATCH_1}")
  endif()
  string(REPLACE "\n" ";" lines "${output}")
  set(reason "")
  set(last "")
  foreach(line IN LISTS lines)
    string(STRIP "${line}" line)
    if(line MATCHES "^(skipped|SKIP|TPEVENT_TOOL_SKIP):[ \t]*(.*)$")
      set(reason "${CMAKE_MATCH_2}")
    elseif(NOT line STREQUAL "")
      set(last "${line}")
    endif()
  endforeach()
  if(reason STREQUAL "")
    set(reason "${last}")
  endif()
  if(reason STREQUAL "")
    set(reason "(no reason printed)")
  endif()
  # Tests quote a backend's reason ("<module path>: <cause>") after lead-ins of their
  # own ("the cuda backend is unavailable: ..."): the backend's words alone group them.
  if(reason MATCHES "(/[^ ]*/libtpevent-[a-z0-9]+\\.so: .*)$")
    set(reason "${CMAKE_MATCH_1}")
  endif()
  string(MD5 key "${reason}")
  if(NOT DEFINED count_${key})
    set(count_${key} 0)
    set(reason_${key} "${reason}")
    list(APPEND keys ${key})
  endif()
  math(EXPR count_${key} "${count_${key}} + 1")
  math(EXPR total "${total} + 1")
endforeach()
if(total EQUAL 0)
  return()
endif()

# Most frequent first: zero-padded counts sort as text.
set(rows "")
foreach(key IN LISTS keys)
  string(LENGTH "${count_${key}}" digits)
  math(EXPR digits "6 - ${digits}")
  string(REPEAT "0" ${digits} pad)
  list(APPEND rows "${pad}${count_${key}}:${key}")
endforeach()
list(SORT rows ORDER DESCENDING)

list(LENGTH keys reasons)
set(text "\nSkipped tests by reason (${total} skipped, ${reasons} reasons; `ctest -V -R NAME` shows a test's output):\n")
foreach(row IN LISTS rows)
  string(REGEX MATCH "^0*([0-9]+):(.*)$" row "${row}")
  set(count "${CMAKE_MATCH_1}")
  set(reason "${reason_${CMAKE_MATCH_2}}")
  foreach(entity "<sc/>=;" "<lb/>=[" "<rb/>=]" "&lt;=<" "&gt;=>" "&quot;=\"" "&apos;='" "&amp;=&")
    string(REGEX MATCH "^([^=]*)=(.*)$" entity "${entity}")
    string(REPLACE "${CMAKE_MATCH_1}" "${CMAKE_MATCH_2}" reason "${reason}")
  endforeach()
  string(LENGTH "${count}" digits)
  math(EXPR digits "5 - ${digits}")
  string(REPEAT " " ${digits} pad)
  string(APPEND text "${pad}${count}  ${reason}\n")
endforeach()
execute_process(COMMAND "${CMAKE_COMMAND}" -E echo_append "${text}")
