# The device types: the one list that the rest of the tree derives from. A line each:
#
#   <name>  <value>  <kind>
#
#   name   the device string's type ("cuda:1"), the module's file (libtpevent-<name>),
#          the backend's folder (backends/<name>), its option (TPEVENT_<NAME>)
#   value  its tp_device_type (include/tpevent/tpevent.h): a contract, carried by IPC
#          handles too; never changed or reused. Public types are 0..n-1, test types
#          follow them.
#   kind   BUILT_IN  linked into the core (the CPU)
#          MODULE    a module the core loads, or links in with TPEVENT_STATIC
#          TEST      known only to the test core (tests/skeleton, built with
#                    TPEVENT_TEST_DEVICE_TYPES): never installed nor offered to users
#
# In the order the default device is chosen when TPEVENT_DEVICE is unset: the first
# usable. The CPU always is, so a type after it is never the default.
set(TPEVENT_DEVICE_TYPE_LIST
  "cuda      1  MODULE"
  "hip       2  MODULE"
  "cpu       0  BUILT_IN"
  "opencl    3  MODULE"
  "vulkan    4  MODULE"
  "skeleton  5  TEST")

# Derived, by value:
#   TPEVENT_DEVICE_TYPES          the public types: cpu cuda hip opencl vulkan
#   TPEVENT_MODULE_DEVICE_TYPES   those built as modules: cuda hip opencl vulkan
#   TPEVENT_TEST_DEVICE_TYPES     skeleton
#   TPEVENT_DEVICE_TYPES_BY_PREFERENCE  the public ones in the list's order
set(TPEVENT_DEVICE_TYPES "")
set(TPEVENT_MODULE_DEVICE_TYPES "")
set(TPEVENT_TEST_DEVICE_TYPES "")
set(TPEVENT_DEVICE_TYPES_BY_PREFERENCE "")
set(tpevent_type_lines "")
list(LENGTH TPEVENT_DEVICE_TYPE_LIST tpevent_type_total)
foreach(line IN LISTS TPEVENT_DEVICE_TYPE_LIST)
  string(REGEX MATCH "^([a-z][a-z0-9]*) +([0-9]+) +(BUILT_IN|MODULE|TEST)$" matched "${line}")
  if(NOT matched)
    message(FATAL_ERROR "cmake/TpeventDeviceTypes.cmake: bad line \"${line}\": <name> <value> BUILT_IN|MODULE|TEST")
  endif()
  set(tpevent_type_${CMAKE_MATCH_2} "${CMAKE_MATCH_1};${CMAKE_MATCH_3}")
  set(tpevent_kind_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_3}")
  set(tpevent_value_of_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
  if(NOT CMAKE_MATCH_3 STREQUAL "TEST")
    list(APPEND TPEVENT_DEVICE_TYPES_BY_PREFERENCE ${CMAKE_MATCH_1})
  endif()
endforeach()
math(EXPR tpevent_type_last "${tpevent_type_total} - 1")
foreach(value RANGE ${tpevent_type_last})
  if(NOT DEFINED tpevent_type_${value})
    message(FATAL_ERROR "cmake/TpeventDeviceTypes.cmake: no type has value ${value}: values are 0..${tpevent_type_last}")
  endif()
  list(GET tpevent_type_${value} 0 name)
  list(GET tpevent_type_${value} 1 kind)
  if(kind STREQUAL "TEST")
    list(APPEND TPEVENT_TEST_DEVICE_TYPES ${name})
  else()
    if(TPEVENT_TEST_DEVICE_TYPES)
      message(FATAL_ERROR "cmake/TpeventDeviceTypes.cmake: ${name} (${value}) follows a test type: test types come last")
    endif()
    list(APPEND TPEVENT_DEVICE_TYPES ${name})
    if(kind STREQUAL "MODULE")
      list(APPEND TPEVENT_MODULE_DEVICE_TYPES ${name})
    endif()
  endif()
endforeach()

# tpevent_write_device_types_header(<file>): the list as C (core/device_types.h), for
# the core: X-macros over the types, the known names for messages, the order of the
# default, and each type's built-in entry (NULL for a module the core loads).
function(tpevent_write_device_types_header file)
  set(public "")
  set(test "")
  set(test_values "")
  set(preference "")
  set(test_preference "")
  set(entries "")
  foreach(name IN LISTS TPEVENT_DEVICE_TYPES TPEVENT_TEST_DEVICE_TYPES)
    string(TOUPPER "${name}" upper)
    set(kind "${tpevent_kind_of_${name}}")
    set(item " \\\n    X(${upper}, ${name}, ${tpevent_value_of_${name}}, ${kind})")
    if(kind STREQUAL "TEST")
      string(APPEND test "${item}")
      # The public enum has no name for a test type: the test core's backend takes this one.
      string(APPEND test_values "\n#define TP_DEVICE_${upper} ((tp_device_type)${tpevent_value_of_${name}})")
    else()
      string(APPEND public "${item}")
    endif()
    if(kind STREQUAL "BUILT_IN")
      string(APPEND entries "#define TP_BUILTIN_ENTRY_${upper} tp_backend_entry_${name}\n")
    elseif(kind STREQUAL "MODULE")
      string(APPEND entries "#ifdef TPEVENT_BUILTIN_${upper}\n#define TP_BUILTIN_ENTRY_${upper} "
                            "tp_backend_entry_${name}\n#else\n#define TP_BUILTIN_ENTRY_${upper} NULL\n#endif\n")
    else()
      string(APPEND entries "#define TP_BUILTIN_ENTRY_${upper} NULL\n")
    endif()
  endforeach()
  foreach(line IN LISTS TPEVENT_DEVICE_TYPE_LIST)
    string(REGEX MATCH "^([a-z0-9]+) +([0-9]+) +([A-Z_]+)$" matched "${line}")
    if(CMAKE_MATCH_3 STREQUAL "TEST")
      string(APPEND test_preference ", ${CMAKE_MATCH_2}")
    else()
      string(APPEND preference ", ${CMAKE_MATCH_2}")
    endif()
  endforeach()
  string(SUBSTRING "${preference}" 2 -1 preference)
  list(JOIN TPEVENT_DEVICE_TYPES ", " known)
  set(test_known "${known}")
  foreach(name IN LISTS TPEVENT_TEST_DEVICE_TYPES)
    string(APPEND test_known ", ${name}")
  endforeach()
  list(LENGTH TPEVENT_DEVICE_TYPES public_count)
  list(LENGTH TPEVENT_TEST_DEVICE_TYPES test_count)
  math(EXPR all_count "${public_count} + ${test_count}")
  file(CONFIGURE OUTPUT "${file}" @ONLY CONTENT [[
/* Written by cmake/TpeventDeviceTypes.cmake from its list of device types: edit the list, not this file. */
#ifndef TPEVENT_CORE_DEVICE_TYPES_H
#define TPEVENT_CORE_DEVICE_TYPES_H

#include <tpevent/tpevent.h>

/* X(UPPER, name, value, kind) for each type of the public enum, by value; kind is
 * BUILT_IN or MODULE. */
#define TP_PUBLIC_DEVICE_TYPES(X)@public@
_Static_assert(TP_DEVICE_TYPE_COUNT == @public_count@, "tpevent.h's TP_DEVICE_TYPE_COUNT is not the list's number of public types");

#ifdef TPEVENT_TEST_DEVICE_TYPES
/* The test core's types (kind TEST), after the public ones. The core's tables are
 * sized by TP_DEVICE_TYPE_COUNT, which counts them here. */
#define TP_TEST_DEVICE_TYPES(X)@test@@test_values@
#define TP_KNOWN_DEVICE_TYPE_NAMES "@test_known@"
#define TP_DEVICE_TYPE_PREFERENCE {@preference@@test_preference@}
#undef TP_DEVICE_TYPE_COUNT
#define TP_DEVICE_TYPE_COUNT @all_count@
#else
#define TP_TEST_DEVICE_TYPES(X)
#define TP_KNOWN_DEVICE_TYPE_NAMES "@known@"
#define TP_DEVICE_TYPE_PREFERENCE {@preference@}
#endif

#define TP_DEVICE_TYPES(X) TP_PUBLIC_DEVICE_TYPES(X) TP_TEST_DEVICE_TYPES(X)

/* The entry of each type linked into the core; NULL: a module, loaded. */
@entries@
#endif /* TPEVENT_CORE_DEVICE_TYPES_H */
]])
endfunction()

# tpevent_test_devices(<devices> <peers>): the devices a test runs every backend's
# tests on, each with its peer for the cross-device rules: device 0 of every public
# type with that type's device 1, and the CPU's second device (TPEVENT_CPU_DEVICES=2)
# with its first.
function(tpevent_test_devices devices peers)
  set(d "")
  set(p "")
  foreach(type IN LISTS TPEVENT_DEVICE_TYPES)
    list(APPEND d ${type}:0)
    list(APPEND p ${type}:1)
    if(tpevent_kind_of_${type} STREQUAL "BUILT_IN")
      list(APPEND d ${type}:1)
      list(APPEND p ${type}:0)
    endif()
  endforeach()
  set(${devices} ${d} PARENT_SCOPE)
  set(${peers} ${p} PARENT_SCOPE)
endfunction()

# tpevent_backend_modules(<out>): the module targets of the types built here
# (tpevent_<name>, libtpevent-<name> in the library folder, beside libtpevent.so),
# for what depends on every backend: the tool, the install. Test doubles of the
# same file name (tests/gpu_fake, tests/loader) have other target names.
function(tpevent_backend_modules out)
  set(found "")
  foreach(name IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
    if(TARGET tpevent_${name})
      list(APPEND found tpevent_${name})
    endif()
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# What the list is checked against (tests/tool: tool.builds_every_module), found
# without it:
# tpevent_defined_module_targets(<out> [<directory>]): the backend modules the build defines
# in <directory> (default: the whole project) and the directories below it, as far
# as they are configured yet: MODULE libraries named libtpevent-<backend> in the
# library folder, beside libtpevent.so, where the core's loader finds them. Test
# doubles of the same name (tests/gpu_fake, tests/loader) live in folders of their
# own and are not among them.
function(tpevent_defined_module_targets out)
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
    tpevent_defined_module_targets(below "${subdirectory}")
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()
