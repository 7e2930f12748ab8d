# cmake -DREADME=<README.md> -DOUTPUT=<file.c> -P extract_readme_example.cmake
#
# Writes the first ```c block of README so that docs.readme_example compiles the
# example a reader copies, not a copy of it that could drift. A #line directive keeps
# compiler messages pointing at README.md's own lines. The output is rewritten only
# when it changes, so an unrelated README edit does not recompile the example.
if(NOT README OR NOT OUTPUT)
  message(FATAL_ERROR "usage: cmake -DREADME=<README.md> -DOUTPUT=<file.c> -P ${CMAKE_CURRENT_LIST_FILE}")
endif()
file(READ "${README}" text)
string(FIND "${text}" "\n```c\n" fence)
if(fence EQUAL -1)
  message(FATAL_ERROR "${README}: no ```c block (the C example docs.readme_example compiles)")
endif()
math(EXPR body_start "${fence} + 6")
string(SUBSTRING "${text}" ${body_start} -1 rest)
string(FIND "${rest}" "\n```" close)
if(close EQUAL -1)
  message(FATAL_ERROR "${README}: the first ```c block is not closed")
endif()
math(EXPR body_length "${close} + 1")
string(SUBSTRING "${rest}" 0 ${body_length} example)

# The fence is on line (newlines before its "\n") + 2, the example starts on the next.
string(SUBSTRING "${text}" 0 ${fence} before)
string(REGEX REPLACE "[^\n]" "" newlines "${before}")
string(LENGTH "${newlines}" fence_line)
math(EXPR first_line "${fence_line} + 3")

set(source "#line ${first_line} \"${README}\"\n${example}")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL source)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${source}")
