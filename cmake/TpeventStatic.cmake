# The static build (TPEVENT_STATIC=ON): libtpevent.a with the module backends linked in,
# for programs that cannot load modules. Included by TpeventInstall.cmake, after every
# folder has been read, so that the backend modules' targets exist.
#
# For each GPU backend that is built, the relocatable object its module is made of
# (tpevent_backend_<backend>_linked, from backends/gpu/gpu_module.cmake: every symbol
# in it is local but tp_backend_entry_<backend>, hidden, so CUDA's and HIP's builds of
# the same functions link side by side) goes into libtpevent.a, and the core's
# registry calls those entries directly (TPEVENT_BUILTIN_CUDA, TPEVENT_BUILTIN_HIP)
# instead of loading a module. The runtimes they need (CUDA::cudart_static,
# libamdhip64) go into the exported target's link interface, so that a consumer's
# link gets them, and into tpevent.pc's Libs.private.
#
# Sets, for TpeventInstall.cmake:
#   TPEVENT_BACKENDS_BUILT_IN          the module types (cmake/TpeventDeviceTypes.cmake) linked in
#   TPEVENT_STATIC_PC_LIBS             tpevent.pc's Libs.private for the runtimes
#   TPEVENT_CONFIG_FIND_DEPENDENCIES   find_dependency() lines for tpeventConfig.cmake
#   TPEVENT_STATIC_NOTE                a word for the configure summary

set(TPEVENT_BACKENDS_BUILT_IN "")
set(TPEVENT_STATIC_PC_LIBS "")
set(TPEVENT_CONFIG_FIND_DEPENDENCIES "")
set(TPEVENT_STATIC_NOTE " (static: libtpevent.a, the module backends linked in)")

# tpevent_pc_link_flags(<out> <items...>): pkg-config flags for CMake link items:
# imported targets (followed through their own link interface), library files,
# plain library names and flags.
function(tpevent_pc_link_flags out)
  set(flags "")
  foreach(item IN LISTS ARGN)
    if(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
      set(item "${CMAKE_MATCH_1}")
    endif()
    if(item STREQUAL "Threads::Threads")
      list(APPEND flags "-pthread")
    elseif(TARGET "${item}")
      get_target_property(location "${item}" IMPORTED_LOCATION)
      if(NOT location)
        get_target_property(configs "${item}" IMPORTED_CONFIGURATIONS)
        foreach(config IN LISTS configs)
          get_target_property(location "${item}" IMPORTED_LOCATION_${config})
          if(location)
            break()
          endif()
        endforeach()
      endif()
      if(location)
        tpevent_pc_link_flags(own "${location}")
        list(APPEND flags ${own})
      endif()
      get_target_property(interface "${item}" INTERFACE_LINK_LIBRARIES)
      if(interface)
        tpevent_pc_link_flags(more ${interface})
        list(APPEND flags ${more})
      endif()
    elseif(IS_ABSOLUTE "${item}")
      get_filename_component(dir "${item}" DIRECTORY)
      get_filename_component(name "${item}" NAME_WE)
      string(REGEX REPLACE "^lib" "" name "${name}")
      list(APPEND flags "-L${dir}" "-l${name}")
    elseif(item MATCHES "^-")
      list(APPEND flags "${item}")
    elseif(item)
      list(APPEND flags "-l${item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES flags)
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# tpevent_static_link_item(<out> <item>): a backend's link item in a form that can
# be written here and exported: imported targets of the backends' folders are not
# visible from this one, so a package's target is found again here (CUDA::*), and
# a target of the folder's own making is replaced by its file.
function(tpevent_static_link_item out item)
  if(item STREQUAL "Threads::Threads" OR TARGET "${item}")
    set(${out} "${item}" PARENT_SCOPE)
  elseif(item MATCHES "^CUDA::")
    find_package(CUDAToolkit REQUIRED)
    set(${out} "${item}" PARENT_SCOPE)
  elseif(item STREQUAL "tpevent_amdhip64" AND TPEVENT_AMDHIP64_LIBRARY)
    # backends/hip's imported target for the file it found (a cache variable).
    set(${out} "${TPEVENT_AMDHIP64_LIBRARY}" PARENT_SCOPE)
  elseif(item MATCHES "::")
    message(FATAL_ERROR "TPEVENT_STATIC: a backend links ${item}, which is not known here; "
                        "cmake/TpeventStatic.cmake needs to find its package")
  else()
    set(${out} "${item}" PARENT_SCOPE)
  endif()
endfunction()

# The GPU backend's builds: the module types with a relocatable object
# (backends/gpu/gpu_module.cmake).
foreach(backend IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
  set(objects tpevent_backend_${backend}_objects)
  if(NOT TARGET tpevent_${backend} OR NOT TARGET tpevent_backend_${backend}_linked)
    continue()
  endif()
  if(NOT TARGET ${objects})
    message(FATAL_ERROR "TPEVENT_STATIC: the ${backend} backend is built, but there is no "
                        "${objects} target to link into libtpevent.a")
  endif()
  string(TOUPPER "${backend}" runtime)

  get_target_property(runtime_items ${objects} INTERFACE_LINK_LIBRARIES)
  set(link_items "")
  foreach(item IN LISTS runtime_items)
    if(item)
      tpevent_static_link_item(resolved "${item}")
      list(APPEND link_items "${resolved}")
    endif()
  endforeach()

  get_target_property(linked tpevent_backend_${backend}_linked TPEVENT_OBJECT)
  target_sources(tpevent PRIVATE "${linked}")
  add_dependencies(tpevent tpevent_backend_${backend}_linked)
  target_link_libraries(tpevent PRIVATE ${link_items})
  target_compile_definitions(tpevent_static_objects PRIVATE TPEVENT_BUILTIN_${runtime})
  list(APPEND TPEVENT_BACKENDS_BUILT_IN ${backend})

  tpevent_pc_link_flags(pc_flags ${link_items})
  list(APPEND TPEVENT_STATIC_PC_LIBS ${pc_flags})
  if(link_items MATCHES "CUDA::" AND NOT TPEVENT_CONFIG_FIND_DEPENDENCIES MATCHES "CUDAToolkit")
    string(APPEND TPEVENT_CONFIG_FIND_DEPENDENCIES "find_dependency(CUDAToolkit)\n")
  endif()
endforeach()

# Every other module type whose folder builds its objects as they are
# (tpevent_backend_<type>_objects: its functions have a prefix of their own, tp_ocl_*,
# tp_vk_*, not a second build of another backend's): the objects go in as they are,
# with their link interface. Imported targets of a folder are not visible from this
# one, so the package that the folder names in the objects' TPEVENT_PACKAGE property
# (OpenCL, Vulkan) is found again here and becomes a find_dependency(). The registry
# calls tp_backend_entry_<type> (TPEVENT_BUILTIN_<TYPE>). Nothing here names a type.
foreach(backend IN LISTS TPEVENT_MODULE_DEVICE_TYPES)
  set(objects tpevent_backend_${backend}_objects)
  if(NOT TARGET tpevent_${backend} OR NOT TARGET ${objects} OR TARGET tpevent_backend_${backend}_linked)
    continue()
  endif()
  get_target_property(package ${objects} TPEVENT_PACKAGE)
  if(package)
    find_package(${package} REQUIRED)
    string(APPEND TPEVENT_CONFIG_FIND_DEPENDENCIES "find_dependency(${package})\n")
  endif()
  get_target_property(link_items ${objects} INTERFACE_LINK_LIBRARIES)
  if(NOT link_items)
    set(link_items "")
  endif()
  string(TOUPPER "${backend}" upper)
  target_sources(tpevent PRIVATE $<TARGET_OBJECTS:${objects}>)
  target_link_libraries(tpevent PRIVATE ${link_items})
  target_compile_definitions(tpevent_static_objects PRIVATE TPEVENT_BUILTIN_${upper})
  list(APPEND TPEVENT_BACKENDS_BUILT_IN ${backend})
  tpevent_pc_link_flags(pc_flags ${link_items})
  list(APPEND TPEVENT_STATIC_PC_LIBS ${pc_flags})
endforeach()

list(REMOVE_DUPLICATES TPEVENT_STATIC_PC_LIBS)
string(REPLACE ";" " " TPEVENT_STATIC_PC_LIBS "${TPEVENT_STATIC_PC_LIBS}")
