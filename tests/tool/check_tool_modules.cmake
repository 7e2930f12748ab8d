# Every backend module the build defines (MODULES) is among the tpevent tool's
# dependencies (DEPENDENCIES), so that `cmake --build build --target tpevent_tool`
# builds it: without one, the tool said "<backend> unavailable: module not found"
# for a backend the configure said it builds (issue 47, item 7).
#
#   cmake "-DMODULES=a;b" "-DDEPENDENCIES=a;b;c" -P check_tool_modules.cmake
cmake_minimum_required(VERSION 3.25)
set(missing "")
foreach(module IN LISTS MODULES)
  if(NOT module IN_LIST DEPENDENCIES)
    list(APPEND missing ${module})
  endif()
endforeach()
message("backend modules: ${MODULES}; the tool depends on: ${DEPENDENCIES}")
if(missing)
  message(FATAL_ERROR "building tpevent_tool does not build: ${missing} (tools/CMakeLists.txt)")
endif()
