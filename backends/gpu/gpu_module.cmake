# The GPU backend modules: one set of sources (backends/gpu/*.c) built once per runtime, the
# runtime picked by a definition (TPEVENT_GPU_CUDA, TPEVENT_GPU_HIP, TPEVENT_GPU_FAKE) that
# selects its mapping header. Included by backends/cuda, backends/hip and tests/gpu_fake.
include_guard(GLOBAL)

# tpevent_gpu_mode(<option> <out-var>): AUTO, ON or OFF from a TPEVENT_<runtime>
# option, whatever its case (ON/TRUE/YES/1 count as ON).
function(tpevent_gpu_mode option out)
  string(TOUPPER "${${option}}" value)
  if(value STREQUAL "AUTO" OR value STREQUAL "")
    set(${out} AUTO PARENT_SCOPE)
  elseif(value)
    set(${out} ON PARENT_SCOPE)
  else()
    set(${out} OFF PARENT_SCOPE)
  endif()
endfunction()

# tpevent_gpu_sources(<out-var>): the backend's sources, for the modules below and
# for tests/gpu_fake, which builds them over a simulated runtime.
function(tpevent_gpu_sources out)
  set(sources gpu_device.c gpu_pool.c gpu_clock.c gpu_event_record.c gpu_host_counter.c gpu_host_fn_graph.c gpu_host_fn_capture.c gpu_host_fn.c gpu_stream.c gpu_event.c gpu_ipc.c
      gpu_ipc_event.c gpu_ipc_page.c gpu_ipc_page_wait.c gpu_notify.c gpu_snapshot.c gpu_hold.c gpu_flush.c gpu_empty.c gpu_sm_clock.c gpu_timeline_wait.c gpu_tool.c gpu_sample.c gpu_graph.c
      gpu_graph_exec.c gpu_forked.c gpu_backend.c)
  list(TRANSFORM sources PREPEND "${PROJECT_SOURCE_DIR}/backends/gpu/")
  set(${out} ${sources} PARENT_SCOPE)
endfunction()

# tpevent_gpu_objects(<runtime> <link items...>), runtime CUDA, HIP or FAKE; the
# backend's sources compiled for one runtime, each function under the one name its
# source gives it:
#   tpevent_backend_<runtime>_objects  OBJECT library: one object per source (the
#                                      layout test reads the calls between them);
#                                      the runtime is a PUBLIC link item
#   tpevent_backend_<runtime>_linked   custom target that links them into one
#                                      relocatable object, <runtime>-backend.o, in
#                                      which every symbol but the entry
#                                      tp_backend_entry_<runtime> is local; its
#                                      path in the target's TPEVENT_OBJECT property
# The relocatable object is what the module and a static build link: the CUDA and
# the HIP builds of the same names then never meet (no renaming of the sources).
# (<runtime> in lower case in the names.)
function(tpevent_gpu_objects runtime)
  string(TOLOWER ${runtime} name)
  set(objects tpevent_backend_${name}_objects)
  tpevent_gpu_sources(sources)
  add_library(${objects} OBJECT ${sources})
  target_compile_definitions(${objects} PUBLIC TPEVENT_GPU_${runtime})
  target_include_directories(${objects} PRIVATE "${PROJECT_SOURCE_DIR}/include" "${PROJECT_SOURCE_DIR}")
  target_link_libraries(${objects} PUBLIC ${ARGN} Threads::Threads)
  tpevent_strict(${objects})
  tpevent_tls_descriptors(${objects})

  # Every symbol is hidden (CMAKE_C_VISIBILITY_PRESET), the entry too, so the entry
  # is named rather than the hidden ones localized; undefined ones stay global.
  if(NOT CMAKE_LINKER OR NOT CMAKE_OBJCOPY)
    message(FATAL_ERROR "the GPU backends need a linker and objcopy (CMAKE_LINKER, CMAKE_OBJCOPY)")
  endif()
  set(entry tp_backend_entry_${name})
  set(linked "${CMAKE_CURRENT_BINARY_DIR}/${name}-backend.o")
  add_custom_command(OUTPUT "${linked}"
    COMMAND "${CMAKE_LINKER}" -r -o "${linked}.all" "$<TARGET_OBJECTS:${objects}>"
    COMMAND "${CMAKE_OBJCOPY}" "--keep-global-symbol=${entry}" "${linked}.all" "${linked}"
    COMMAND "${CMAKE_COMMAND}" -E rm -f "${linked}.all"
    DEPENDS "$<TARGET_OBJECTS:${objects}>"
    COMMENT "The ${name} GPU backend in one object, only ${entry} global"
    COMMAND_EXPAND_LISTS VERBATIM)
  add_custom_target(tpevent_backend_${name}_linked DEPENDS "${linked}")
  add_dependencies(tpevent_backend_${name}_linked ${objects})
  set_target_properties(tpevent_backend_${name}_linked PROPERTIES TPEVENT_OBJECT "${linked}")
endfunction()

# tpevent_gpu_module(<runtime> <link items...>), runtime CUDA or HIP: the objects
# above, and
#   tpevent_<runtime>                  MODULE lib/libtpevent-<runtime>.so next to
#                                      libtpevent.so, where the core's loader looks
#                                      first: the relocatable object and the exported
#                                      entry (gpu_module_entry.c)
function(tpevent_gpu_module runtime)
  string(TOLOWER ${runtime} name)
  tpevent_gpu_objects(${runtime} ${ARGN})

  set(module tpevent_${name})
  get_target_property(linked tpevent_backend_${name}_linked TPEVENT_OBJECT)
  add_library(${module} MODULE "${linked}" "${PROJECT_SOURCE_DIR}/backends/gpu/gpu_module_entry.c")
  add_dependencies(${module} tpevent_backend_${name}_linked)
  target_compile_definitions(${module} PRIVATE TPEVENT_GPU_${runtime} TPEVENT_GPU_MODULE)
  target_include_directories(${module} PRIVATE "${PROJECT_SOURCE_DIR}/include" "${PROJECT_SOURCE_DIR}")
  # The runtime for the link only: the entry's file includes none of its headers.
  foreach(item IN LISTS ARGN)
    target_link_libraries(${module} PRIVATE "$<LINK_ONLY:${item}>")
  endforeach()
  target_link_libraries(${module} PRIVATE Threads::Threads)
  # Only the entry symbol leaves the module: a statically linked runtime stays
  # private (--exclude-libs), and our calls bind to it even in a process that has
  # another copy of the runtime loaded globally (-Bsymbolic).
  target_link_options(${module} PRIVATE "LINKER:--exclude-libs,ALL" "LINKER:-Bsymbolic")
  if(NOT TPEVENT_SANITIZE)
    target_link_options(${module} PRIVATE "LINKER:-z,defs")
  endif()
  set_target_properties(${module} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "tpevent-${name}"
    LIBRARY_OUTPUT_DIRECTORY "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
  tpevent_strict(${module})
endfunction()
