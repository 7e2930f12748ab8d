# tpevent_strict(target): our code builds with the warnings below, as errors when
# TPEVENT_WERROR is on, and with the sanitizers of TPEVENT_SANITIZE (set by the asan
# and tsan presets).
#
# TPEVENT_WERROR is off unless asked for: the presets and CI (.ci/run) turn it on, so
# that every build type stays warning-free with gcc and clang; a plain
# `cmake -S . -B build` and a project that pulls tpevent in (FetchContent,
# add_subdirectory) get the warnings without failing on them, since a newer compiler
# than CI's may find new ones.
option(TPEVENT_WERROR "Treat warnings in tpevent's own code as errors (on in the presets and CI)" OFF)

function(tpevent_strict target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes>)
  if(TPEVENT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
  endif()
endfunction()

if(TPEVENT_SANITIZE)
  # Applied to everything built here, so that tests, tools and modules agree.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${TPEVENT_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${TPEVENT_SANITIZE})
endif()
