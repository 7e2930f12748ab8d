# tpevent_test_names(<out-var> <source>...): the names of the tests defined in the
# sources with TEST(name) at the start of a line, so that a new test is registered
# without editing a CMakeLists.txt. The sources become configure dependencies.
function(tpevent_test_names out_var)
  set(names "")
  foreach(source IN LISTS ARGN)
    get_filename_component(path "${source}" ABSOLUTE)
    file(STRINGS "${path}" lines REGEX "^TEST\\([a-z0-9_]+\\)")
    foreach(line IN LISTS lines)
      string(REGEX REPLACE "^TEST\\(([a-z0-9_]+)\\).*" "\\1" name "${line}")
      list(APPEND names ${name})
    endforeach()
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
  endforeach()
  set(${out_var} ${names} PARENT_SCOPE)
endfunction()
