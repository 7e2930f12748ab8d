# tpevent_strict(target): our code builds with warnings as errors, and with the
# sanitizers of TPEVENT_SANITIZE (set by the asan and tsan presets).
function(tpevent_strict target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes>)
endfunction()

if(TPEVENT_SANITIZE)
  # Applied to everything built here, so that tests, tools and modules agree.
  add_compile_options($<$<COMPILE_LANGUAGE:C,CXX>:-fsanitize=${TPEVENT_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:C,CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${TPEVENT_SANITIZE})
endif()
