# What `cmake --install` puts into a prefix, and the files that let other projects
# use it: the CMake package (find_package(tpevent)) and tpevent.pc.
#
#   include/tpevent/tpevent.h
#   include/tpevent/tpevent_diagnostics.h   the bench baseline; not part of the stable API
#   lib/libtpevent.so.0.3.0 (+ .so.0.3, .so)   or lib/libtpevent.a with TPEVENT_STATIC
#   lib/libtpevent-<type>.so               each module type of cmake/TpeventDeviceTypes.cmake
#                                            built, next to the core, which looks there first
#   lib/cmake/tpevent/                       tpeventConfig.cmake, version, targets
#   lib/pkgconfig/tpevent.pc
#   bin/tpevent, the Python package          installed by tools/ and python/ themselves
#
# Included by the top CMakeLists.txt after every folder has been read, so that
# `if(TARGET ...)` sees the backends, the tool and the binding.

include(CMakePackageConfigHelpers)

set(TPEVENT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/tpevent"
    CACHE STRING "Where tpeventConfig.cmake is installed, relative to the prefix")
mark_as_advanced(TPEVENT_INSTALL_CMAKEDIR)

# ---------------------------------------------------------------- backends built

# TPEVENT_BACKENDS_BUILT: what find_package(tpevent COMPONENTS ...) can find. The CPU
# backend is always in the core; a GPU backend is there when its module is built or,
# in the static build, when it is linked into libtpevent.a.
set(TPEVENT_BACKENDS_BUILT cpu)
if(TPEVENT_STATIC)
  include(TpeventStatic)
  list(APPEND TPEVENT_BACKENDS_BUILT ${TPEVENT_BACKENDS_BUILT_IN})
else()
  foreach(backend IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
    if(TARGET tpevent_${backend})
      list(APPEND TPEVENT_BACKENDS_BUILT ${backend})
    endif()
  endforeach()
endif()
string(REPLACE ";" ", " tpevent_backends_summary "${TPEVENT_BACKENDS_BUILT}")
# The package's components: the public device types.
list(JOIN TPEVENT_DEVICE_TYPES "|" TPEVENT_CONFIG_COMPONENTS_REGEX)
list(JOIN TPEVENT_DEVICE_TYPES ", " TPEVENT_CONFIG_COMPONENTS)
message(STATUS "tpevent: backends installed: ${tpevent_backends_summary}"
               "${TPEVENT_STATIC_NOTE}")

# ------------------------------------------------------------------ run paths

# Installed programs and modules find libtpevent.so relative to themselves, so the
# prefix can be anywhere (and moved) without LD_LIBRARY_PATH.
file(RELATIVE_PATH tpevent_bin_to_lib
     "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${CMAKE_INSTALL_LIBDIR}")
set(tpevent_bin_rpath "$ORIGIN/${tpevent_bin_to_lib}")

# Sets INSTALL_RPATH (if given) on a target of another folder unless its owner
# already did, and keeps the folders of external libraries it links (a CUDA or ROCm
# runtime outside the system folders) in its installed run path.
#
# The build tree has the install layout, so the installed run path serves in the
# build tree too (BUILD_WITH_INSTALL_RPATH). Without that, CMake links the build-tree
# file with a run path of its own that it pads for an in-place rewrite at install,
# and the padding always ends in ':': an empty entry, which the dynamic loader takes
# for the current directory ("<build>/lib:" let a libc.so.6 in the folder a program
# ran from be loaded). hostile.no_relative_runpath checks every built file.
function(tpevent_default_install_rpath target)
  if(NOT TARGET ${target})
    return()
  endif()
  get_target_property(current ${target} INSTALL_RPATH)
  if(ARGN AND NOT current)
    set_target_properties(${target} PROPERTIES INSTALL_RPATH "${ARGN}")
  endif()
  get_target_property(use_link_path ${target} INSTALL_RPATH_USE_LINK_PATH)
  if(NOT use_link_path)
    set_target_properties(${target} PROPERTIES INSTALL_RPATH_USE_LINK_PATH ON)
  endif()
  set_target_properties(${target} PROPERTIES BUILD_WITH_INSTALL_RPATH ON)
endfunction()

tpevent_default_install_rpath(tpevent_tool "${tpevent_bin_rpath}")
foreach(backend IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
  tpevent_default_install_rpath(tpevent_${backend})
endforeach()

# ------------------------------------------------------------ library, headers

install(TARGETS tpevent EXPORT tpeventTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}")
install(FILES "${PROJECT_SOURCE_DIR}/include/tpevent/tpevent.h"
              "${PROJECT_SOURCE_DIR}/include/tpevent/measure.h"
              "${PROJECT_SOURCE_DIR}/include/tpevent/ipc.h"
              "${PROJECT_SOURCE_DIR}/include/tpevent/vulkan.h"
              "${PROJECT_SOURCE_DIR}/include/tpevent/tpevent_diagnostics.h"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/tpevent")

# The modules go next to libtpevent.so: the core looks in its own folder first, so an
# installed tree needs no TPEVENT_BACKEND_PATH. A static build has them linked in.
if(NOT TPEVENT_STATIC)
  foreach(backend IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
    if(TARGET tpevent_${backend})
      install(TARGETS tpevent_${backend} LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}")
    endif()
  endforeach()
endif()

# --------------------------------------------------------------- CMake package

install(EXPORT tpeventTargets
  NAMESPACE tpevent::
  FILE tpeventTargets.cmake
  DESTINATION "${TPEVENT_INSTALL_CMAKEDIR}")

# While the major version is 0, a minor release may change the API: ask for 0.3 and
# you get any 0.3.x, not 0.4. From 1.0 on, any later version of the same major will do.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(tpevent_version_compatibility SameMinorVersion)
else()
  set(tpevent_version_compatibility SameMajorVersion)
endif()
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/tpeventConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY ${tpevent_version_compatibility})

# What tpeventConfig.cmake.in needs to know of this build.
if(TPEVENT_STATIC)
  set(TPEVENT_CONFIG_STATIC TRUE)
else()
  set(TPEVENT_CONFIG_STATIC FALSE)
endif()
set(TPEVENT_CONFIG_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
if(NOT DEFINED TPEVENT_CONFIG_FIND_DEPENDENCIES)
  set(TPEVENT_CONFIG_FIND_DEPENDENCIES "")
endif()
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/tpeventConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/tpeventConfig.cmake"
  INSTALL_DESTINATION "${TPEVENT_INSTALL_CMAKEDIR}"
  PATH_VARS TPEVENT_CONFIG_LIBDIR)
install(FILES
  "${PROJECT_BINARY_DIR}/tpeventConfig.cmake"
  "${PROJECT_BINARY_DIR}/tpeventConfigVersion.cmake"
  DESTINATION "${TPEVENT_INSTALL_CMAKEDIR}")

# ------------------------------------------------------------------ pkg-config

# tpevent.pc names its prefix relative to its own folder (${pcfiledir}), so that it
# stays right under `cmake --install --prefix <anywhere>` and when the tree is moved.
function(tpevent_pc_path out dir)
  if(IS_ABSOLUTE "${dir}")
    set(${out} "${dir}" PARENT_SCOPE)
  else()
    set(${out} "\${prefix}/${dir}" PARENT_SCOPE)
  endif()
endfunction()
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TPEVENT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH tpevent_pc_to_prefix "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" tpevent_pc_to_prefix "${tpevent_pc_to_prefix}")
  set(TPEVENT_PC_PREFIX "\${pcfiledir}/${tpevent_pc_to_prefix}")
endif()
tpevent_pc_path(TPEVENT_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
tpevent_pc_path(TPEVENT_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")

# Libs.private: what a static link needs besides libtpevent.a (pkg-config --static).
set(TPEVENT_PC_LIBS_PRIVATE "")
if(TPEVENT_STATIC)
  set(TPEVENT_PC_STATIC yes)
  set(TPEVENT_PC_CFLAGS_EXTRA " -DTPEVENT_STATIC")
  string(REPLACE " " ";" TPEVENT_PC_LIBS_PRIVATE "${TPEVENT_STATIC_PC_LIBS}")
else()
  set(TPEVENT_PC_STATIC no)
  set(TPEVENT_PC_CFLAGS_EXTRA "")
endif()
list(APPEND TPEVENT_PC_LIBS_PRIVATE -pthread)
if(CMAKE_DL_LIBS)
  list(APPEND TPEVENT_PC_LIBS_PRIVATE -l${CMAKE_DL_LIBS})
endif()
list(REMOVE_DUPLICATES TPEVENT_PC_LIBS_PRIVATE)
string(REPLACE ";" " " TPEVENT_PC_LIBS_PRIVATE "${TPEVENT_PC_LIBS_PRIVATE}")
string(REPLACE ";" " " TPEVENT_PC_BACKENDS "${TPEVENT_BACKENDS_BUILT}")
configure_file("${CMAKE_CURRENT_LIST_DIR}/tpevent.pc.in" "${PROJECT_BINARY_DIR}/tpevent.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/tpevent.pc" DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
