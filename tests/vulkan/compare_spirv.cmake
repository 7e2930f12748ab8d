# vulkan.spirv_matches_source: the committed SPIR-V (COMMITTED) is the build's compile
# of spin.comp (BUILT), line for line, less the comment line glslangValidator writes
# its own version in.
foreach(which BUILT COMMITTED)
  file(STRINGS "${${which}}" lines)
  list(FILTER lines EXCLUDE REGEX "^[ \t]*//")
  set(${which}_lines "${lines}")
endforeach()
if(NOT BUILT_lines STREQUAL COMMITTED_lines)
  message(FATAL_ERROR "${COMMITTED} is not the compile of spin.comp (${BUILT}): copy the built one over it")
endif()
message(STATUS "the committed SPIR-V is spin.comp's compile")
