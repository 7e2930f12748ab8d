# tpevent_backend_modules(<out> [<directory>]): the backend modules the build defines
# in <directory> (default: the whole project) and the directories below it, as far
# as they are configured yet: MODULE libraries named libtpevent-<backend> in the
# library folder, beside libtpevent.so, where the core's loader finds them. Test
# doubles of the same name (tests/gpu_fake, tests/loader) live in folders of their
# own and are not among them.
function(tpevent_backend_modules out)
  set(dir "${PROJECT_SOURCE_DIR}")
  if(ARGC GREATER 1)
    set(dir "${ARGV1}")
  endif()
  set(found "")
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(NOT type STREQUAL "MODULE_LIBRARY")
      continue()
    endif()
    get_target_property(name ${target} OUTPUT_NAME)
    get_target_property(folder ${target} LIBRARY_OUTPUT_DIRECTORY)
    if(name MATCHES "^tpevent-" AND folder STREQUAL CMAKE_LIBRARY_OUTPUT_DIRECTORY)
      list(APPEND found ${target})
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    tpevent_backend_modules(below "${subdirectory}")
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
